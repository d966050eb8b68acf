// The REST client every command uses: errors become CliErrors with an exit code and a hint.
import { CliError, EXIT } from "./exit-codes.ts";
import type { Target } from "./config.ts";

/** How many times a read answered 503 (database unavailable) is asked again. */
const READ_RETRIES = 5;

export class ApiClient {
  readonly target: Target;
  constructor(target: Target) {
    this.target = target;
  }

  /** The workspace id, or a usage error saying how to pick one. */
  get workspaceId(): string {
    if (!this.target.workspaceId)
      throw new CliError(
        "no workspace selected",
        EXIT.USAGE,
        "run `millrace workspace add <name> <workspace_id> <url> --token <token>` or pass --workspace",
      );
    return this.target.workspaceId;
  }

  /** `/api/w/<ws>` + path. */
  ws(path: string): string {
    return `/api/w/${encodeURIComponent(this.workspaceId)}${path}`;
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const url = `${this.target.url}${path}`;
    let response = await this.send(url, method, body, headers);
    // The server answers 503 with Retry-After while its database is away (restarting, failing
    // over, out of connections). A read is asked again; a write is not, since the server may have
    // done part of it before the database went away: the error says to retry.
    for (let attempt = 1; response.status === 503 && (method === "GET" || method === "HEAD"); attempt++) {
      const wait = Number(response.headers.get("retry-after"));
      if (!Number.isFinite(wait) || attempt > READ_RETRIES) break;
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(wait, 1), 10) * 1000));
      response = await this.send(url, method, body, headers);
    }
    if (!response.ok) await raiseFor(response, method, path);
    return response;
  }

  private async send(
    url: string,
    method: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          ...(this.target.token ? { Authorization: `Bearer ${this.target.token}` } : {}),
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      throw new CliError(
        `cannot reach ${this.target.url} (${cause})`,
        EXIT.UNREACHABLE,
        "check that the server runs and --url (or $MILLRACE_URL) points at it",
      );
    }
    return response;
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.request(method, path, body);
    const text = await response.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      return text as T;
    }
  }
}

async function raiseFor(response: Response, method: string, path: string): Promise<never> {
  const text = await response.text();
  let message = text;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    message =
      (typeof parsed.error === "string" ? parsed.error : parsed.error?.message) ?? parsed.message ?? text;
  } catch {
    // Windmill-style plain-text errors stay as they are.
  }
  const what = `${method} ${path}: ${response.status} ${message}`.trim();
  if (response.status === 401)
    throw new CliError(
      what,
      EXIT.UNAUTHORIZED,
      "the token is missing, wrong or expired: create one under API tokens and pass --token",
    );
  if (response.status === 403)
    throw new CliError(what, EXIT.UNAUTHORIZED, "your role may not do this: ask a workspace admin");
  if (response.status === 404) throw new CliError(what, EXIT.NOT_FOUND);
  if (response.status === 400 || response.status === 422) throw new CliError(what, EXIT.INVALID);
  if (response.status === 409) throw new CliError(what, EXIT.NEEDS_CONFIRMATION);
  if (response.status === 503 && response.headers.has("retry-after"))
    throw new CliError(
      what,
      EXIT.UNREACHABLE,
      "the server's database is unavailable: run the command again shortly",
    );
  throw new CliError(what, EXIT.FAILED);
}
