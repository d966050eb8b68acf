import { randomBytes } from "node:crypto";

/**
 * A new job's id: a UUID version 7 (RFC 9562), whose first 48 bits are the time in milliseconds
 * and the other 74 random. Consecutive jobs' ids sort together, so the job table's and pg-boss's
 * primary keys grow at their right edge instead of touching a random page of a large index for
 * every job: on a table of millions of jobs, most of those pages are no longer in memory. The 74
 * random bits keep ids as hard to guess as a version 4's 122 for any practical purpose (an id is
 * never a credential: every read of a job checks the caller's workspace and role).
 */
export function newJobId(now = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
