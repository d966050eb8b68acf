import type { Pool } from "@millrace/db";

/**
 * Tells the workers that a job's token read a secret (a variable, or one inside a resource), so
 * that they mask its value in the logs and result of that user's running jobs. The payload carries
 * the stored (encrypted) value when it fits a notification, which the worker decrypts itself.
 */
export const JOB_SECRET_READ_CHANNEL = "millrace_job_secret_read";

// PostgreSQL refuses notification payloads of 8000 bytes or more.
const MAX_PAYLOAD = 7900;

/** A secret read by a job's token: `stored` is its encrypted value, null when too long to carry. */
export interface JobSecretRead {
  workspaceId: string;
  username: string;
  path: string;
  stored: string | null;
}

export function jobSecretReadPayload(read: Omit<JobSecretRead, "stored"> & { stored: string }): string {
  const full = JSON.stringify({ w: read.workspaceId, u: read.username, p: read.path, v: read.stored });
  if (full.length < MAX_PAYLOAD) return full;
  return JSON.stringify({ w: read.workspaceId, u: read.username, p: read.path, v: null });
}

export function parseJobSecretRead(payload: string): JobSecretRead | null {
  try {
    const { w, u, p, v } = JSON.parse(payload) as Record<string, unknown>;
    if (typeof w !== "string" || typeof u !== "string" || typeof p !== "string") return null;
    return { workspaceId: w, username: u, path: p, stored: typeof v === "string" ? v : null };
  } catch {
    return null;
  }
}

/** Sent (committed) before the secret's value goes back to the job. */
export async function notifyJobSecretRead(
  pool: Pool,
  read: Omit<JobSecretRead, "stored"> & { stored: string },
): Promise<void> {
  await pool.query("SELECT pg_notify($1, $2)", [JOB_SECRET_READ_CHANNEL, jobSecretReadPayload(read)]);
}

/**
 * A job running on an agent worker read a secret through its own token: kept (as its stored
 * ciphertext) for the server that answers that agent's logs and completion, which masks it there
 * (see agentAppendLogs). The agent has no LISTEN connection, and the server answering it may not
 * be the one that answered the read: a row is seen by every server, committed before the value
 * goes back to the job. Nothing is written for a job that is not running on an agent.
 */
export async function recordAgentJobSecretRead(
  pool: Pool,
  jobId: string,
  read: { path: string; stored: string },
): Promise<void> {
  await pool.query(
    `INSERT INTO agent_job_secret (job_id, workspace_id, path, value)
     SELECT j.id, j.workspace_id, $2, $3 FROM job j
       JOIN worker_ping w ON w.name = j.worker_name AND w.agent_token_id IS NOT NULL
      WHERE j.id = $1::uuid AND j.status = 'running'
        AND NOT EXISTS (SELECT 1 FROM agent_job_secret s WHERE s.job_id = j.id AND s.value = $3)`,
    [jobId, read.path, read.stored],
  );
}
