// Init and periodic scripts of a worker group (init_bash, periodic_script_bash): each run is
// recorded as a job of the `admins` workspace, kind `init_script` or `periodic_script`, with its
// log and result (as in Windmill, where superadmins see them). A database worker records its runs
// itself; the server records an agent worker's (routes under /api/agent_workers/worker_script).
import type { Pool } from "@millrace/db";
import { JOB_DONE_CHANNEL } from "../jobs/events.ts";
import { appendJobLog } from "../jobs/claim.ts";
import { ADMINS_WORKSPACE, ensureAdminsWorkspace } from "../workspaces.ts";
import { newJobId } from "../jobs/job-id.ts";

export const WORKER_SCRIPTS_WORKSPACE = ADMINS_WORKSPACE;
export const WORKER_SCRIPT_TIMEOUT_SECS = 3600;

export type WorkerScriptKind = "init_script" | "periodic_script";

/** How a run ended, as the worker reports it. */
export type WorkerScriptOutcome =
  | { status: "success"; result: unknown }
  | { status: "failure"; error: { name: string; message: string } }
  | { status: "canceled" };

/** Records the start of a run (a `running` job of the admins workspace); answers its id. */
export async function recordWorkerScriptStart(
  pool: Pool,
  run: { kind: WorkerScriptKind; group: string; workerName: string; content: string },
): Promise<string> {
  const id = newJobId();
  await ensureAdminsWorkspace({ pool });
  await pool.query(
    `INSERT INTO job (id, workspace_id, kind, script_path, language, content, args, tag, status, created_by,
       permissioned_as, started_at, worker_name, timeout_secs)
     VALUES ($1, $2, $3, $4, 'bash', $5, '{}', $3, 'running', $6, $6, now(), $6, $7)`,
    [
      id,
      WORKER_SCRIPTS_WORKSPACE,
      run.kind,
      `worker_group/${run.group}/${run.kind}`,
      run.content,
      run.workerName,
      WORKER_SCRIPT_TIMEOUT_SECS,
    ],
  );
  return id;
}

/** Records the end of a run: its last output, status and result. */
export async function recordWorkerScriptEnd(
  pool: Pool,
  id: string,
  outcome: WorkerScriptOutcome,
  pendingLog: string,
): Promise<void> {
  const status =
    outcome.status === "success" ? "success" : outcome.status === "failure" ? "failure" : "canceled";
  const result =
    outcome.status === "success"
      ? outcome.result
      : {
          error:
            outcome.status === "failure" ? outcome.error : { name: "Canceled", message: "worker stopping" },
        };
  if (pendingLog) await appendJobLog(pool, id, pendingLog);
  await pool.query(
    `UPDATE job SET status = $2::job_status, result = $3, completed_at = now()
      WHERE id = $1 AND status = 'running'`,
    [id, status, JSON.stringify(result ?? null)],
  );
  await pool.query("SELECT pg_notify($1, $2)", [JOB_DONE_CHANNEL, id]);
}
