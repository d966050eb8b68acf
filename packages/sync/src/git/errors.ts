// Errors of the git transport. Messages name the remote by its URL with any credentials removed;
// they never include a password or token.

/** Removes `user:password@` from a URL so it can appear in messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) {
      parsed.username = "";
      parsed.password = "";
    }
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^/@]*@/, "//");
  }
}

/** Base class of every error thrown by the git transport. */
export class GitSyncError extends Error {
  readonly url: string;
  constructor(message: string, url: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "GitSyncError";
    this.url = redactUrl(url);
  }
}

/** The remote could not be reached (connection refused, reset, timeout, DNS, or a 5xx answer). */
export class GitRemoteUnavailableError extends GitSyncError {
  constructor(url: string, detail: string, options?: { cause?: unknown }) {
    super(`git remote ${redactUrl(url)} is unreachable (${detail}); the push will be retried`, url, options);
    this.name = "GitRemoteUnavailableError";
  }
}

/** The remote refused the credentials (HTTP 401/403). */
export class GitAuthError extends GitSyncError {
  readonly status: number;
  constructor(url: string, status: number, options?: { cause?: unknown }) {
    super(
      `git remote ${redactUrl(url)} refused the credentials (HTTP ${status}): check the username and the token or password of the workspace's git sync settings`,
      url,
      options,
    );
    this.name = "GitAuthError";
    this.status = status;
  }
}

/** Our commits and the remote's new commits changed the same files: nothing was overwritten. */
export class GitConflictError extends GitSyncError {
  readonly paths: string[];
  readonly branch: string;
  constructor(url: string, branch: string, paths: string[]) {
    super(
      `git remote ${redactUrl(url)} branch ${branch} changed the same files as this workspace; nothing was overwritten. Conflicting paths: ${paths.join(", ")}`,
      url,
    );
    this.name = "GitConflictError";
    this.paths = paths;
    this.branch = branch;
  }
}
