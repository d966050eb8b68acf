// libpq's multi-host DATABASE_URL (`postgresql://u:p@db1:5432,db2:5432/millrace?target_session_attrs=read-write`),
// which node-postgres does not read: every connection goes to the host last known to be the
// writable primary; a host that refuses, or turns out to be a standby (a demoted primary, a
// replica not yet promoted), is suspected, the hosts are probed again, and the next connection
// goes to the one that accepts writes. A failover thus needs no DNS switch and no restart: the
// requests made during it fail as "database unavailable" (503) and the following ones succeed.
import pg from "pg";
import { sessionUrl } from "./pgbouncer.ts";

export interface HostPort {
  host: string;
  port: number;
}

export interface MultiHostUrl {
  hosts: HostPort[];
  /** target_session_attrs=read-write (or primary): only a writable server will do. */
  readWrite: boolean;
  /** The URL for one of the hosts, as node-postgres reads it. */
  urlFor(host: HostPort): string;
}

const AUTHORITY = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/;

/** The hosts of a URL naming more than one; null for an ordinary URL. */
export function parseMultiHostUrl(url: string): MultiHostUrl | null {
  const match = AUTHORITY.exec(url);
  if (!match) return null;
  const [, scheme, userinfo = "", hostList = "", rest = ""] = match;
  if (!hostList.includes(",")) return null;
  const hosts = hostList.split(",").map((entry) => {
    // [::1]:5432, host:5432 or host (libpq's default port).
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    const plain = /^([^:]+)(?::(\d+))?$/.exec(entry);
    const found = bracketed ?? plain;
    if (!found) throw new Error(`DATABASE_URL: cannot read the host "${entry}"`);
    return { host: found[1]!, port: found[2] ? Number(found[2]) : 5432 };
  });
  const query = new URLSearchParams(rest.includes("?") ? rest.slice(rest.indexOf("?") + 1) : "");
  const attrs = query.get("target_session_attrs") ?? "any";
  query.delete("target_session_attrs");
  const path = rest.includes("?") ? rest.slice(0, rest.indexOf("?")) : rest;
  const search = query.toString();
  return {
    hosts,
    readWrite: attrs === "read-write" || attrs === "primary",
    urlFor: ({ host, port }) =>
      `${scheme}${userinfo}${host.includes(":") ? `[${host}]` : host}:${port}${path}${search ? `?${search}` : ""}`,
  };
}

/** Which host the connections of one URL go to, shared by every pool and client of the process. */
class PrimaryTracker {
  private current = 0;
  private probing: Promise<void> | null = null;
  readonly url: MultiHostUrl;
  constructor(url: MultiHostUrl) {
    this.url = url;
  }

  currentUrl(): string {
    return this.url.urlFor(this.url.hosts[this.current]!);
  }

  /** The current host failed: the next connection tries the next one while all are probed. */
  suspect(failed: string): void {
    if (this.currentUrl() === failed) this.current = (this.current + 1) % this.url.hosts.length;
    this.probing ??= this.probe().finally(() => (this.probing = null));
  }

  private async probe(): Promise<void> {
    for (let i = 0; i < this.url.hosts.length; i++) {
      const client = new pg.Client({
        connectionString: this.url.urlFor(this.url.hosts[i]!),
        connectionTimeoutMillis: 3000,
      });
      try {
        await client.connect();
        const { rows } = await client.query<{ standby: boolean }>("SELECT pg_is_in_recovery() AS standby");
        if (!this.url.readWrite || !rows[0]!.standby) {
          this.current = i;
          return;
        }
      } catch {
        // down or unreachable: the next host
      } finally {
        await client.end().catch(() => {});
      }
    }
  }
}

const trackers = new Map<string, PrimaryTracker>();

function trackerFor(url: string): PrimaryTracker | null {
  const parsed = parseMultiHostUrl(url);
  if (!parsed) return null;
  let tracker = trackers.get(url);
  if (!tracker) trackers.set(url, (tracker = new PrimaryTracker(parsed)));
  return tracker;
}

/** A connection to a standby where a writable primary is needed (SQLSTATE read_only_sql_transaction). */
function standbyError(url: string): Error {
  const { host, port } = new URL(url);
  return Object.assign(
    new Error(`${host}:${port} is a standby (read-only): looking for the primary among the other hosts`),
    { code: "25006" },
  );
}

/**
 * node-postgres' Client for `url`: pg.Client itself for an ordinary URL; for a multi-host one, a
 * Client that connects to the tracked primary and hands its failure to the tracker. pg.Pool
 * makes its connections with it (its `Client` option).
 */
export function clientClassFor(url: string): typeof pg.Client {
  const found = trackerFor(url);
  if (!found) return pg.Client;
  const tracker: PrimaryTracker = found;
  return class PrimaryClient extends pg.Client {
    private readonly target: string;
    constructor(config?: string | pg.ClientConfig) {
      const target = tracker.currentUrl();
      // pg reads connectionString over the other fields: the chosen host's URL replaces it.
      super({ ...(typeof config === "string" ? {} : config), connectionString: target });
      this.target = target;
    }

    // Both of pg's forms: pg-pool passes a callback, our code awaits the promise.
    override connect(): Promise<pg.Client>;
    override connect(callback: (error: Error | undefined) => void): void;
    override connect(callback?: (error: Error | undefined) => void): Promise<pg.Client> | void {
      const connected = this.connectToPrimary().then(() => this as pg.Client);
      if (!callback) return connected;
      connected.then(
        () => callback(undefined),
        (error: Error) => callback(error),
      );
    }

    private async connectToPrimary(): Promise<void> {
      try {
        await super.connect();
      } catch (error) {
        tracker.suspect(this.target);
        throw error;
      }
      if (!tracker.url.readWrite) return;
      const { rows } = await super.query<{ standby: boolean }>("SELECT pg_is_in_recovery() AS standby");
      if (rows[0]!.standby) {
        tracker.suspect(this.target);
        await this.end().catch(() => {});
        throw standbyError(this.target);
      }
    }
  };
}

/**
 * A client of its own (LISTEN, advisory locks, one-off checks) for `url`, multi-host or not.
 * Behind PgBouncer in transaction mode it is a session: DATABASE_URL_DIRECT (pgbouncer.ts).
 */
export function createClient(url: string, config: Omit<pg.ClientConfig, "connectionString"> = {}): pg.Client {
  const target = sessionUrl(url);
  const Client = clientClassFor(target);
  return new Client({ ...config, connectionString: target });
}
