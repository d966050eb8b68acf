// What `GET /api/ready` answers: whether this server can serve requests now, i.e. whether its
// database answers. A load balancer or Kubernetes readiness probe takes a server that answers 503
// out of rotation until it recovers; liveness stays on `/api/version`, which never touches the
// database, so that a database outage does not get every server restarted in a loop.
import type { Pool } from "@millrace/db";

/**
 * Seconds a client should wait before asking again: the Retry-After of every 503 the database's
 * absence causes (this probe's, and any route's: the web app's errorResponse).
 */
export const READY_RETRY_AFTER_SECS = 2;
/** A probe that waits longer than this for the database counts as a failure. */
export const READY_TIMEOUT_MS = 2000;

export type Readiness = { ready: true } | { ready: false; reason: string };

export async function checkReadiness(pool: Pool, timeoutMs = READY_TIMEOUT_MS): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  // node-postgres waits for a connection without limit by default: a dropped network would hang
  // the probe until the kubelet's own timeout, which reports nothing useful.
  const timeout = new Promise<Readiness>((resolve) => {
    timer = setTimeout(
      () => resolve({ ready: false, reason: `the database did not answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
  });
  const probe = pool.query("SELECT 1").then(
    (): Readiness => ({ ready: true }),
    // A public endpoint: the error's code only, never its message (it names hosts and users).
    (error: unknown): Readiness => {
      const code = (error as { code?: unknown } | null)?.code;
      return {
        ready: false,
        reason: `the database is unreachable${typeof code === "string" && /^[A-Z0-9_]{1,32}$/.test(code) ? ` (${code})` : ""}`,
      };
    },
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
