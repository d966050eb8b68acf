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
