// Git transport for server-side git sync: isomorphic-git over HTTP(S) only, working in a local
// working directory (one cache folder per workspace). ensureClone → commitFiles → pushWithRebase
// is one sync; pullFiles reads the remote branch head for restore.
//
// Rebase: when the remote moved, our unpushed commits are replayed on top of the remote head by
// re-applying the files each commit changed (same author and message), provided the remote's new
// commits touched other files. When a file changed on both sides, nothing is rewritten or pushed and
// a GitConflictError lists the paths.
import fs from "node:fs";
import path from "node:path";
import git from "isomorphic-git";
import http from "isomorphic-git/http/node";
import {
  GitAuthError,
  GitConflictError,
  GitRemoteUnavailableError,
  GitSyncError,
  redactUrl,
} from "./errors.ts";

/** HTTP Basic credentials. For token-based hosts put the token in `password` (any username). */
export interface GitAuth {
  username?: string;
  password?: string;
}

export interface GitRemoteOptions {
  /** Local working directory (cache folder of the workspace). */
  dir: string;
  /** HTTP(S) URL of the remote repository, preferably without credentials in it. */
  url: string;
  branch: string;
  auth?: GitAuth;
}

export interface GitAuthor {
  name: string;
  email: string;
}

export interface CommitFilesOptions {
  dir: string;
  /** Repository-relative paths (forward slashes) and their content. */
  files: Map<string, string | Uint8Array>;
  /**
   * Paths to delete, or "replace-all": the working tree becomes exactly `files` (everything else
   * except `.git` is removed).
   */
  deleted?: string[] | "replace-all";
  author: GitAuthor;
  message: string;
}

export interface EnsureCloneResult {
  /** The local branch head after the clone/fetch (null: nothing committed yet). */
  head: string | null;
  /** The remote branch head (null: the branch does not exist on the remote yet). */
  remoteHead: string | null;
}

export interface PushResult {
  /** The branch head now on the remote (null when there was nothing to push). */
  head: string | null;
  /** True when our commits were replayed on top of commits someone else pushed. */
  rebased: boolean;
  /** Push attempts made (1 unless the remote moved). */
  attempts: number;
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "ECONNABORTED",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
]);

function authHeaders(auth: GitAuth | undefined): Record<string, string> {
  if (!auth || (!auth.username && !auth.password)) return {};
  const token = Buffer.from(`${auth.username ?? ""}:${auth.password ?? ""}`).toString("base64");
  return { Authorization: `Basic ${token}` };
}

/** Credentials given inside the URL are moved to a header so they never reach git config or errors. */
function splitUrl(url: string, auth: GitAuth | undefined): { url: string; headers: Record<string, string> } {
  let clean = url;
  let merged = auth;
  try {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) {
      merged = {
        username: auth?.username ?? decodeURIComponent(parsed.username),
        password: auth?.password ?? decodeURIComponent(parsed.password),
      };
      clean = redactUrl(url);
    }
  } catch {
    // not a URL isomorphic-git can use either; it reports that itself
  }
  return { url: clean.replace(/\/$/, ""), headers: authHeaders(merged) };
}

function errorCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return code;
    if (Array.isArray((current as { errors?: unknown }).errors)) {
      for (const inner of (current as { errors: unknown[] }).errors) {
        const innerCode = errorCode(inner);
        if (innerCode) return innerCode;
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function scrub(message: string, auth: GitAuth | undefined): string {
  let out = message;
  for (const secret of [auth?.password]) {
    if (secret && secret.length >= 1) out = out.split(secret).join("***");
  }
  return out.replace(/\/\/[^/@\s]*@/g, "//");
}

/** Turns an isomorphic-git or network error into one of ours, with no secret in its message. */
function mapError(err: unknown, url: string, auth: GitAuth | undefined, action: string): Error {
  if (err instanceof GitSyncError) return err;
  const e = err as {
    code?: string;
    data?: { statusCode?: number; statusMessage?: string };
    message?: string;
  };
  if (e?.code === "HttpError" && e.data?.statusCode !== undefined) {
    const status = e.data.statusCode;
    if (status === 401 || status === 403) return new GitAuthError(url, status);
    if (status >= 500 || status === 408 || status === 429) {
      return new GitRemoteUnavailableError(url, `HTTP ${status} ${e.data.statusMessage ?? ""}`.trim());
    }
    return new GitSyncError(
      `git ${action} to ${redactUrl(url)} failed: HTTP ${status} ${e.data.statusMessage ?? ""}`.trim(),
      url,
    );
  }
  const netCode = errorCode(err);
  if (netCode) return new GitRemoteUnavailableError(url, netCode);
  const message = scrub(String(e?.message ?? err), auth);
  return new GitSyncError(`git ${action} with ${redactUrl(url)} failed: ${message}`, url, { cause: err });
}

async function resolve(dir: string, ref: string): Promise<string | null> {
  try {
    return await git.resolveRef({ fs, dir, ref });
  } catch {
    return null;
  }
}

function checkPath(file: string): string {
  const normalized = path.posix.normalize(file.replace(/\\/g, "/"));
  if (
    !normalized ||
    normalized === "." ||
    normalized.startsWith("/") ||
    normalized === ".." ||
    normalized.startsWith("../") ||
    normalized === ".git" ||
    normalized.startsWith(".git/")
  ) {
    throw new Error(`invalid repository path: ${JSON.stringify(file)}`);
  }
  return normalized;
}

/**
 * Fetches the branch into refs/remotes/origin/<branch>. Returns the remote head, or null when
 * the branch does not exist on the remote (e.g. an empty repository).
 */
async function fetchBranch(opts: GitRemoteOptions, depth?: number): Promise<string | null> {
  const { url, headers } = splitUrl(opts.url, opts.auth);
  let refs: { ref: string; oid: string }[];
  try {
    refs = await git.listServerRefs({
      http,
      url,
      headers: { ...headers },
      prefix: `refs/heads/${opts.branch}`,
    });
  } catch (err) {
    throw mapError(err, url, opts.auth, "fetch");
  }
  const remote = refs.find((r) => r.ref === `refs/heads/${opts.branch}`);
  if (!remote) return null;
  const tracking = await resolve(opts.dir, `refs/remotes/origin/${opts.branch}`);
  if (tracking === remote.oid) return remote.oid;
  try {
    await git.fetch({
      fs,
      http,
      dir: opts.dir,
      url,
      headers: { ...headers }, // isomorphic-git mutates it (Git-Protocol)
      remote: "origin",
      ref: opts.branch,
      remoteRef: opts.branch,
      singleBranch: true,
      tags: false,
      ...(depth ? { depth } : {}),
    });
  } catch (err) {
    throw mapError(err, url, opts.auth, "fetch");
  }
  // isomorphic-git writes the tracking ref; make sure it points where the server said.
  await git.writeRef({
    fs,
    dir: opts.dir,
    ref: `refs/remotes/origin/${opts.branch}`,
    value: remote.oid,
    force: true,
  });
  return remote.oid;
}

async function setBranchAndCheckout(dir: string, branch: string, oid: string): Promise<void> {
  await git.writeRef({ fs, dir, ref: `refs/heads/${branch}`, value: oid, force: true });
  await git.writeRef({ fs, dir, ref: "HEAD", value: `refs/heads/${branch}`, symbolic: true, force: true });
  await git.checkout({ fs, dir, ref: branch, force: true });
}

/**
 * Makes `dir` a working copy of the remote branch: init (with the remote set) when missing, fetch,
 * and fast-forward the local branch when it has no commits of its own. An empty remote (branch
 * absent) is fine: the first push creates the branch. Unpushed local commits are kept.
 */
export async function ensureClone(
  opts: GitRemoteOptions & {
    /**
     * Drop local commits that are not on the remote (a sync whose push failed): the caller
     * commits them again from its own record of what is not pushed yet.
     */
    discardLocal?: boolean;
    /** Fetch only this many commits (1: the files at the head, enough for a restore). */
    depth?: number;
  },
): Promise<EnsureCloneResult> {
  const { dir, branch } = opts;
  const { url } = splitUrl(opts.url, opts.auth);
  await fs.promises.mkdir(dir, { recursive: true });
  if (!fs.existsSync(path.join(dir, ".git"))) {
    await git.init({ fs, dir, defaultBranch: branch });
  }
  await git.setConfig({ fs, dir, path: "remote.origin.url", value: url });
  await git.setConfig({ fs, dir, path: "remote.origin.fetch", value: "+refs/heads/*:refs/remotes/origin/*" });
  const current = await git.resolveRef({ fs, dir, ref: "HEAD", depth: 1 }).catch(() => null);
  if (current !== `refs/heads/${branch}`) {
    await git.writeRef({ fs, dir, ref: "HEAD", value: `refs/heads/${branch}`, symbolic: true, force: true });
  }

  const remoteHead = await fetchBranch(opts, opts.depth);
  let head = await resolve(dir, `refs/heads/${branch}`);
  if (opts.discardLocal && head !== remoteHead) {
    if (remoteHead) {
      await setBranchAndCheckout(dir, branch, remoteHead);
      return { head: remoteHead, remoteHead };
    }
    // The branch is not on the remote yet: start again from an empty repository.
    await fs.promises.rm(dir, { recursive: true, force: true });
    return ensureClone({ ...opts, discardLocal: false });
  }
  if (remoteHead && head !== remoteHead) {
    const behind =
      head === null || (await git.isDescendent({ fs, dir, oid: remoteHead, ancestor: head, depth: -1 }));
    if (behind) {
      await setBranchAndCheckout(dir, branch, remoteHead);
      head = remoteHead;
    }
  }
  return { head, remoteHead };
}

async function listWorkingFiles(dir: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.promises.readdir(path.join(dir, rel), { withFileTypes: true })) {
    if (rel === "" && entry.name === ".git") continue;
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await listWorkingFiles(dir, child)));
    else out.push(child);
  }
  return out;
}

async function removeEmptyParents(dir: string, file: string): Promise<void> {
  let parent = path.posix.dirname(file);
  while (parent && parent !== ".") {
    try {
      await fs.promises.rmdir(path.join(dir, parent));
    } catch {
      return;
    }
    parent = path.posix.dirname(parent);
  }
}

function sameBytes(a: Buffer, b: string | Uint8Array): boolean {
  return a.equals(
    typeof b === "string" ? Buffer.from(b, "utf8") : Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}

/**
 * Writes the files, removes the deleted ones, stages everything and commits when something changed.
 * Returns the new commit's oid, or null when there was nothing to commit.
 */
export async function commitFiles(opts: CommitFilesOptions): Promise<string | null> {
  const { dir } = opts;
  const files = new Map<string, string | Uint8Array>();
  for (const [file, content] of opts.files) files.set(checkPath(file), content);

  const toDelete = new Set<string>();
  if (opts.deleted === "replace-all") {
    for (const file of await listWorkingFiles(dir)) if (!files.has(file)) toDelete.add(file);
  } else {
    for (const file of opts.deleted ?? []) toDelete.add(checkPath(file));
  }
  for (const file of toDelete) {
    if (files.has(file)) continue;
    await fs.promises.rm(path.join(dir, file), { force: true, recursive: true });
    await removeEmptyParents(dir, file);
  }
  for (const [file, content] of files) {
    const full = path.join(dir, file);
    const existing = await fs.promises.readFile(full).catch(() => null);
    if (existing && sameBytes(existing, content)) continue;
    await fs.promises.mkdir(path.dirname(full), { recursive: true });
    await fs.promises.writeFile(full, content);
  }

  // Only the paths this commit names are compared, unless the whole tree is replaced: a commit
  // of one script in a repository of thousands stays cheap.
  const named = opts.deleted === "replace-all" ? undefined : [...files.keys(), ...toDelete];
  if (named && named.length === 0) return null;
  const matrix = await git.statusMatrix({ fs, dir, cache: {}, ...(named ? { filepaths: named } : {}) });
  const changed: string[] = [];
  const added: string[] = [];
  // One cache for the whole commit: isomorphic-git then reads the index and packs once, not once
  // per file (thousands of files on a first sync).
  const cache = {};
  for (const [filepath, headStatus, workdirStatus, stageStatus] of matrix) {
    if (headStatus === 1 && workdirStatus === 1 && stageStatus === 1) continue;
    if (workdirStatus === 0) {
      await git.remove({ fs, dir, filepath, cache });
      if (headStatus === 1) changed.push(filepath);
    } else {
      added.push(filepath);
      changed.push(filepath);
    }
  }
  if (added.length > 0) await git.add({ fs, dir, filepath: added, cache });
  if (changed.length === 0) return null;
  const author = { name: opts.author.name, email: opts.author.email };
  return git.commit({ fs, dir, message: opts.message, author, committer: author, cache });
}

interface TreeEntry {
  oid: string;
  mode: string;
}

async function flatTree(dir: string, commitOid: string | null): Promise<Map<string, TreeEntry>> {
  const out = new Map<string, TreeEntry>();
  if (!commitOid) return out;
  const { commit } = await git.readCommit({ fs, dir, oid: commitOid });
  const walk = async (treeOid: string, prefix: string): Promise<void> => {
    const { tree } = await git.readTree({ fs, dir, oid: treeOid });
    for (const entry of tree) {
      const p = prefix + entry.path;
      if (entry.type === "tree") await walk(entry.oid, `${p}/`);
      else out.set(p, { oid: entry.oid, mode: entry.mode });
    }
  };
  await walk(commit.tree, "");
  return out;
}

/**
 * Files that differ between two commits of the local repository (null: the branch did not exist);
 * null when `from` is not known locally (e.g. a working copy made after the remote was rewritten).
 */
export async function changedPaths(
  dir: string,
  from: string | null,
  to: string | null,
): Promise<string[] | null> {
  try {
    return [...diffFlat(await flatTree(dir, from), await flatTree(dir, to)).keys()].sort();
  } catch {
    return null;
  }
}

/** Paths whose blob differs between two flat trees; value = the entry in `to`, null when removed. */
function diffFlat(from: Map<string, TreeEntry>, to: Map<string, TreeEntry>): Map<string, TreeEntry | null> {
  const out = new Map<string, TreeEntry | null>();
  for (const [p, entry] of to) {
    const before = from.get(p);
    if (!before || before.oid !== entry.oid || before.mode !== entry.mode) out.set(p, entry);
  }
  for (const p of from.keys()) if (!to.has(p)) out.set(p, null);
  return out;
}

async function writeFlatTree(dir: string, flat: Map<string, TreeEntry>): Promise<string> {
  interface Node {
    files: Map<string, TreeEntry>;
    dirs: Map<string, Node>;
  }
  const root: Node = { files: new Map(), dirs: new Map() };
  for (const [p, entry] of flat) {
    const parts = p.split("/");
    let node = root;
    for (const part of parts.slice(0, -1)) {
      let next = node.dirs.get(part);
      if (!next) {
        next = { files: new Map(), dirs: new Map() };
        node.dirs.set(part, next);
      }
      node = next;
    }
    node.files.set(parts[parts.length - 1] ?? "", entry);
  }
  const write = async (node: Node): Promise<string> => {
    const tree: { mode: string; path: string; oid: string; type: "blob" | "tree" | "commit" }[] = [];
    for (const [name, child] of node.dirs)
      tree.push({ mode: "040000", path: name, oid: await write(child), type: "tree" });
    for (const [name, entry] of node.files) {
      tree.push({
        mode: entry.mode,
        path: name,
        oid: entry.oid,
        type: entry.mode === "160000" ? "commit" : "blob",
      });
    }
    return git.writeTree({ fs, dir, tree });
  };
  return write(root);
}

/**
 * Replays the local commits that the remote head lacks on top of it. Throws GitConflictError (and
 * changes nothing) when both sides changed the same file differently.
 */
async function rebaseOnto(opts: GitRemoteOptions, url: string, remoteHead: string): Promise<boolean> {
  const { dir, branch } = opts;
  const local = await resolve(dir, `refs/heads/${branch}`);
  if (!local || local === remoteHead) return false;
  if (await git.isDescendent({ fs, dir, oid: local, ancestor: remoteHead, depth: -1 })) return false;
  if (await git.isDescendent({ fs, dir, oid: remoteHead, ancestor: local, depth: -1 })) {
    await setBranchAndCheckout(dir, branch, remoteHead);
    return false;
  }
  const bases = await git.findMergeBase({ fs, dir, oids: [local, remoteHead] });
  const base: string | null = bases[0] ?? null;

  // Our commits since the merge base, oldest first (first-parent chain).
  const ours: { oid: string; parent: string | null }[] = [];
  for (let oid: string | null = local; oid && oid !== base;) {
    const { commit } = await git.readCommit({ fs, dir, oid });
    const parent = commit.parent[0] ?? null;
    ours.unshift({ oid, parent });
    oid = parent;
  }

  const baseTree = await flatTree(dir, base);
  const theirTree = await flatTree(dir, remoteHead);
  const ourTree = await flatTree(dir, local);
  const theirs = diffFlat(baseTree, theirTree);
  const perCommit: Map<string, TreeEntry | null>[] = [];
  const oursChanged = new Set<string>();
  for (const c of ours) {
    const diff = diffFlat(
      await flatTree(dir, c.parent === base ? base : c.parent),
      await flatTree(dir, c.oid),
    );
    perCommit.push(diff);
    for (const p of diff.keys()) oursChanged.add(p);
  }
  const conflicts = [...oursChanged]
    .filter((p) => theirs.has(p))
    .filter(
      (p) => ourTree.get(p)?.oid !== theirTree.get(p)?.oid || ourTree.get(p)?.mode !== theirTree.get(p)?.mode,
    )
    .sort();
  if (conflicts.length > 0) throw new GitConflictError(url, branch, conflicts);

  const tree = new Map(theirTree);
  let parent = remoteHead;
  let parentTreeOid = (await git.readCommit({ fs, dir, oid: remoteHead })).commit.tree;
  for (const [i, c] of ours.entries()) {
    for (const [p, entry] of perCommit[i] ?? []) {
      if (entry) tree.set(p, entry);
      else tree.delete(p);
    }
    const treeOid = await writeFlatTree(dir, tree);
    if (treeOid === parentTreeOid) continue; // already on the remote: nothing left to replay
    const { commit } = await git.readCommit({ fs, dir, oid: c.oid });
    parent = await git.commit({
      fs,
      dir,
      message: commit.message,
      author: commit.author,
      committer: { name: commit.committer.name, email: commit.committer.email },
      tree: treeOid,
      parent: [parent],
      noUpdateBranch: true,
    });
    parentTreeOid = treeOid;
  }
  await setBranchAndCheckout(dir, branch, parent);
  return true;
}

/**
 * Pushes the local branch. When the remote moved, fetches, replays our commits on top of the
 * remote head if the changed files are disjoint (GitConflictError otherwise) and pushes again.
 */
export async function pushWithRebase(opts: GitRemoteOptions & { maxAttempts?: number }): Promise<PushResult> {
  const { dir, branch } = opts;
  const { url, headers } = splitUrl(opts.url, opts.auth);
  const maxAttempts = opts.maxAttempts ?? 5;
  let rebased = false;
  for (let attempt = 1; ; attempt++) {
    const local = await resolve(dir, `refs/heads/${branch}`);
    if (!local) return { head: null, rebased, attempts: attempt - 1 };
    let rejection: string;
    try {
      const result = await git.push({
        fs,
        http,
        dir,
        url,
        headers: { ...headers }, // isomorphic-git mutates it (Git-Protocol)
        remote: "origin",
        ref: branch,
        remoteRef: branch,
      });
      if (result.ok) return { head: local, rebased, attempts: attempt };
      rejection = scrub(result.error ?? "push rejected", opts.auth);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== "PushRejectedError" && code !== "GitPushError")
        throw mapError(err, url, opts.auth, "push");
      rejection = scrub(String((err as Error).message), opts.auth);
    }
    if (attempt >= maxAttempts) {
      throw new GitSyncError(
        `git push to ${redactUrl(url)} was rejected ${attempt} times (${rejection}): the branch ${branch} keeps moving`,
        url,
      );
    }
    const remoteHead = await fetchBranch(opts);
    if (
      remoteHead === null ||
      remoteHead === local ||
      (await git.isDescendent({ fs, dir, oid: local, ancestor: remoteHead, depth: -1 }))
    ) {
      // The remote did not move past us: the rejection has another cause (a hook, a protected branch).
      throw new GitSyncError(
        `git push to ${redactUrl(url)} branch ${branch} was rejected: ${rejection}`,
        url,
      );
    }
    if (await rebaseOnto(opts, url, remoteHead)) rebased = true;
  }
}

/** The files at the remote branch head (empty when the branch does not exist), as UTF-8 text. */
export async function pullFiles(opts: GitRemoteOptions): Promise<Map<string, string>> {
  // A working copy of its own: the head is all a restore needs, whatever the history's length.
  const fresh = !fs.existsSync(path.join(opts.dir, ".git"));
  const { remoteHead } = await ensureClone({ ...opts, ...(fresh ? { depth: 1 } : {}) });
  const out = new Map<string, string>();
  if (!remoteHead) return out;
  const flat = await flatTree(opts.dir, remoteHead);
  for (const p of [...flat.keys()].sort()) {
    const entry = flat.get(p);
    if (!entry || entry.mode === "160000") continue;
    const { blob } = await git.readBlob({ fs, dir: opts.dir, oid: entry.oid });
    out.set(p, Buffer.from(blob).toString("utf8"));
  }
  return out;
}
