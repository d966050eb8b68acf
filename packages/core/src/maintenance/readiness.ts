// What `GET /api/ready` answers: whether this server can serve requests now, i.e. whether its
// database answers. A load balancer or Kubernetes readiness probe takes a server that answers 503
// out of rotation until it recovers; liveness stays on `/api/version`, which never touches the
// database, so that a database outage does not get every server restarted in a loop.
import type { Pool } from "@millrace/db";

// The web app maps these to 503 + Retry-After for every route; it imports only core.
export { isTransientDatabaseError } from "@millrace/db";

/** Seconds a client should wait before asking again (the Retry-After of a 503). */
export const READY_RETRY_AFTER_SECS = 5;
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
    (error: unknown): Readiness => ({
      ready: false,
      reason: `the database is unreachable: ${error instanceof Error ? error.message : String(error)}`,
    }),
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
