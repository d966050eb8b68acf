// A real git remote for tests: a bare repository served over smart HTTP by git's own
// `git http-backend` (CGI) behind a small Node HTTP server on 127.0.0.1, with HTTP Basic
// authentication. Never a mocked git: isomorphic-git talks to the same protocol a hosted remote
// speaks. stop()/start() simulate the remote being down (same port again).
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

const HTTP_BACKEND_CANDIDATES = [
  "/usr/lib/git-core/git-http-backend",
  "/usr/libexec/git-core/git-http-backend",
];

export interface TestGitRemoteOptions {
  /** Basic auth username (default "git"). */
  username?: string;
  /** Basic auth password or token (default "secret-token"). */
  password?: string;
  /** Branch of `git init --bare -b` (default "main"). */
  branch?: string;
  /** Repository name in the URL (default "repo.git"). */
  repoName?: string;
}

export interface RemoteCommit {
  oid: string;
  authorName: string;
  authorEmail: string;
  /** Full message, trailing newline trimmed. */
  message: string;
  /** Files changed by the commit (added, modified or deleted), sorted. */
  files: string[];
  /** Per file: A, M, D (as `git log --name-status` prints). */
  changes: { status: string; path: string }[];
}

export interface TestGitRemote {
  /** http://127.0.0.1:PORT/repo.git (no credentials in it). */
  readonly url: string;
  /** The bare repository's directory. */
  readonly dir: string;
  readonly branch: string;
  readonly username: string;
  readonly password: string;
  readonly port: number;
  /** Number of HTTP requests answered (any status). */
  readonly requests: number;
  /** Closes the HTTP server and its connections: the remote is "down". */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** Commits on the branch, newest first (empty when the branch does not exist yet). */
  commits(): Promise<RemoteCommit[]>;
  /** The branch head oid, or null when the branch does not exist. */
  head(): Promise<string | null>;
  /** A file's content at the branch head, or null when absent. */
  readFile(filePath: string): Promise<string | null>;
  /** File paths at the branch head, sorted. */
  listFiles(): Promise<string[]>;
  /**
   * Someone else commits on the remote: clones with the git CLI into a temp dir, writes the files
   * (null deletes), commits and pushes. Returns the new commit's oid.
   */
  commitAsOther(opts: {
    files: Record<string, string | null>;
    message: string;
    author?: { name: string; email: string };
  }): Promise<string>;
  /** Stops the server and removes the temp folders. */
  close(): Promise<void>;
}

function findHttpBackend(): string {
  for (const candidate of HTTP_BACKEND_CANDIDATES) if (fs.existsSync(candidate)) return candidate;
  throw new Error("git-http-backend not found: install git (apt-get install -y git)");
}

async function git(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const { stdout } = await execFileAsync("git", args, {
    cwd,
    env: {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_TERMINAL_PROMPT: "0",
      ...env,
    },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

export async function startTestGitRemote(options: TestGitRemoteOptions = {}): Promise<TestGitRemote> {
  const username = options.username ?? "git";
  const password = options.password ?? "secret-token";
  const branch = options.branch ?? "main";
  const repoName = options.repoName ?? "repo.git";
  const backend = findHttpBackend();

  const root = await fs.promises.mkdtemp(path.join(os.tmpdir(), "millrace-git-remote-"));
  const dir = path.join(root, repoName);
  await git(root, ["init", "--quiet", "--bare", "-b", branch, dir]);
  // Pushes over HTTP are allowed for the authenticated user (REMOTE_USER is set below).
  await git(dir, ["config", "http.receivepack", "true"]);

  const expected = "Basic " + Buffer.from(`${username}:${password}`).toString("base64");
  const children = new Set<ReturnType<typeof spawn>>();
  let requests = 0;

  const server = http.createServer((req, res) => {
    requests++;
    if (req.headers.authorization !== expected) {
      req.resume();
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="millrace-test"', "Content-Type": "text/plain" });
      res.end("authentication required\n");
      return;
    }
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: "1",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      REMOTE_USER: username,
      REMOTE_ADDR: "127.0.0.1",
      REQUEST_METHOD: req.method ?? "GET",
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ""),
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      SERVER_PROTOCOL: "HTTP/1.1",
      GATEWAY_INTERFACE: "CGI/1.1",
    };
    if (req.headers["content-length"]) env.CONTENT_LENGTH = req.headers["content-length"];
    if (req.headers["content-encoding"]) env.HTTP_CONTENT_ENCODING = req.headers["content-encoding"];
    if (req.headers["git-protocol"]) env.GIT_PROTOCOL = String(req.headers["git-protocol"]);

    const child = spawn(backend, [], { env, stdio: ["pipe", "pipe", "pipe"] });
    children.add(child);
    child.on("close", () => children.delete(child));
    child.on("error", () => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
    child.stdin.on("error", () => {});
    req.pipe(child.stdin);
    child.stderr.resume();

    // Parse the CGI headers, then stream the body.
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      let end = head.indexOf("\r\n\r\n");
      let sepLen = 4;
      if (end < 0) {
        end = head.indexOf("\n\n");
        sepLen = 2;
      }
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString("latin1").split(/\r?\n/)) {
        const colon = line.indexOf(":");
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10) || 200;
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      const rest = head.subarray(end + sepLen);
      if (rest.length > 0) res.write(rest);
    });
    child.stdout.on("end", () => {
      if (!headersDone) {
        if (!res.headersSent) res.writeHead(502);
      }
      res.end();
    });
  });

  let port = 0;
  let listening = false;
  const start = async (): Promise<void> => {
    if (listening) return;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    port = (server.address() as AddressInfo).port;
    listening = true;
  };
  const stop = async (): Promise<void> => {
    if (!listening) return;
    listening = false;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    for (const child of children) child.kill("SIGKILL");
    await closed;
  };
  await start();

  const head = async (): Promise<string | null> => {
    try {
      return (await git(dir, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`])).trim() || null;
    } catch {
      return null;
    }
  };

  const remote: TestGitRemote = {
    get url() {
      return `http://127.0.0.1:${port}/${repoName}`;
    },
    dir,
    branch,
    username,
    password,
    get port() {
      return port;
    },
    get requests() {
      return requests;
    },
    stop,
    start,
    head,
    async commits() {
      if ((await head()) === null) return [];
      const sep = "\x1e";
      const out = await git(dir, [
        "log",
        "--no-renames",
        "--name-status",
        `--format=${sep}%H%x00%an%x00%ae%x00%B%x00`,
        `refs/heads/${branch}`,
      ]);
      const result: RemoteCommit[] = [];
      for (const record of out.split(sep)) {
        if (!record.trim()) continue;
        const [oid = "", authorName = "", authorEmail = "", message = "", rest = ""] = record.split("\x00");
        const changes = rest
          .split("\n")
          .map((line) => line.trim())
          .filter(Boolean)
          .map((line) => {
            const [status = "", ...p] = line.split("\t");
            return { status, path: p.join("\t") };
          });
        result.push({
          oid,
          authorName,
          authorEmail,
          message: message.replace(/\n+$/, ""),
          files: changes.map((c) => c.path).sort(),
          changes,
        });
      }
      return result;
    },
    async readFile(filePath: string) {
      try {
        return await git(dir, ["show", `refs/heads/${branch}:${filePath}`]);
      } catch {
        return null;
      }
    },
    async listFiles() {
      if ((await head()) === null) return [];
      const out = await git(dir, ["ls-tree", "-r", "--name-only", `refs/heads/${branch}`]);
      return out.split("\n").filter(Boolean).sort();
    },
    async commitAsOther({
      files,
      message,
      author = { name: "Someone Else", email: "someone@example.test" },
    }) {
      const work = await fs.promises.mkdtemp(path.join(os.tmpdir(), "millrace-git-other-"));
      try {
        const exists = (await head()) !== null;
        if (exists) {
          await git(work, ["clone", "--quiet", "--branch", branch, dir, "."]);
        } else {
          await git(work, ["init", "--quiet", "-b", branch]);
          await git(work, ["remote", "add", "origin", dir]);
        }
        for (const [file, content] of Object.entries(files)) {
          const full = path.join(work, file);
          if (content === null) await fs.promises.rm(full, { force: true });
          else {
            await fs.promises.mkdir(path.dirname(full), { recursive: true });
            await fs.promises.writeFile(full, content);
          }
        }
        await git(work, ["add", "--all", "."]);
        const env = {
          GIT_AUTHOR_NAME: author.name,
          GIT_AUTHOR_EMAIL: author.email,
          GIT_COMMITTER_NAME: author.name,
          GIT_COMMITTER_EMAIL: author.email,
        };
        await git(work, ["commit", "--quiet", "-m", message], env);
        await git(work, ["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`]);
        return (await git(work, ["rev-parse", "HEAD"])).trim();
      } finally {
        await fs.promises.rm(work, { recursive: true, force: true });
      }
    },
    async close() {
      await stop();
      await fs.promises.rm(root, { recursive: true, force: true });
    },
  };
  return remote;
}
