// Whether a failed statement may succeed if simply sent again: the database was unreachable,
// restarting or overloaded, or the transaction lost a race. Anything else (bad data, a limit the
// statement itself hits) fails the same way every time.

// SQLSTATE classes: 08 connection exception, 53 insufficient resources, 57 operator intervention
// (admin/crash shutdown, cannot connect now), 58 system error; 40 transaction rollback
// (serialization failure, deadlock).
const TRANSIENT_CLASSES = new Set(["08", "40", "53", "57", "58"]);
// 53 also holds 53100 disk full and 53200 out of memory, which a retry may well outlive too.

const TRANSIENT_SYSCALL_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOENT", // a Unix socket that is not there yet: the server is starting
  "EAI_AGAIN",
]);

export function isTransientDatabaseError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    // First: some syscall codes (EPIPE, ECONN…) have the shape of a SQLSTATE too.
    if (TRANSIENT_SYSCALL_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) return TRANSIENT_CLASSES.has(code.slice(0, 2));
    return false;
  }
  // node-postgres' own errors carry no code.
  return /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Client was closed/i.test(
    error.message,
  );
}

// Prisma's codes for the same situations: P1001 not reachable, P1002/P1008 timed out, P1017 the
// server closed the connection, P2024 no pool connection in time, P2034 write conflict or
// deadlock, P2037 too many connections.
const UNAVAILABLE_PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024", "P2034", "P2037"]);
// What the driver adapter (adapter-pg) calls them when no Prisma code is given.
const UNAVAILABLE_ADAPTER_KINDS = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
  "TransactionWriteConflict",
]);
// 25006 read_only_sql_transaction: a write reached a standby or a demoted primary.
const READ_ONLY = "25006";

/**
 * Whether a failure is the database's state rather than the request or the code: unreachable,
 * restarting, out of connections, read-only (a failover in progress), or a lost race that a retry
 * wins. Such a request is answered 503 with Retry-After, never 500. Follows `cause` chains and
 * Prisma's wrapping of driver errors.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    if (isTransientDatabaseError(current)) return true;
    const { code, meta } = current as { code?: unknown; meta?: { driverAdapterError?: unknown } };
    if (code === READ_ONLY) return true;
    if (typeof code === "string" && UNAVAILABLE_PRISMA_CODES.has(code)) return true;
    // Prisma's known errors hold the adapter's error in meta; the adapter's DriverAdapterError
    // holds a plain object `{kind, originalCode}` as its cause.
    const adapterCause = ((meta?.driverAdapterError as { cause?: unknown } | undefined)?.cause ??
      (current as { cause?: unknown }).cause) as { kind?: unknown; originalCode?: unknown } | undefined;
    const kind = adapterCause?.kind;
    const originalCode = adapterCause?.originalCode;
    if (typeof kind === "string" && UNAVAILABLE_ADAPTER_KINDS.has(kind)) return true;
    if (typeof originalCode === "string") {
      if (originalCode === READ_ONLY) return true;
      if (/^[0-9A-Z]{5}$/.test(originalCode) && TRANSIENT_CLASSES.has(originalCode.slice(0, 2))) return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
