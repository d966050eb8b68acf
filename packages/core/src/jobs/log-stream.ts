import type { Job } from "@millrace/db";
import { canSeeJob } from "../access.ts";
import { invalidInput, notFound } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";
import { JOB_DONE_CHANNEL, JOB_LOG_CHANNEL } from "./events.ts";
import { isFinished, isJobId } from "./queries.ts";
import type { JobsContext } from "./run.ts";

/** What changed since `log_offset`, as Windmill's job updates carry it. */
export interface JobUpdate {
  running: boolean;
  completed: boolean;
  newLogs: string;
  /** Characters of the log seen so far (PostgreSQL characters, not UTF-16 units). */
  logOffset: number;
  /** More log is waiting beyond this update (it carried its maximum share). */
  moreLogs?: boolean;
  /** The finished job (without its logs), on the completed update only. */
  job?: Job;
}

// One update carries at most this much log, so a reconnecting viewer of a capped 4 MB log gets it
// in pieces rather than one huge event.
export const MAX_UPDATE_LOG_CHARS = 256 * 1024;

const MAX_INT = 2 ** 31 - 1;

interface Snapshot {
  status: string;
  createdBy: string;
  scriptPath: string | null;
  total: number;
  chunk: string;
  chunkChars: number;
}

/**
 * Status and the log after `offset`, read in one statement: completion writes the last output and
 * the final status in one transaction, so a finished snapshot always holds the whole log.
 */
async function readSnapshot(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  offset: number,
  maxChars: number,
): Promise<Snapshot> {
  // Offsets count PostgreSQL characters (code points), never JavaScript's UTF-16 units.
  const { rows } = await ctx.pool.query<Snapshot>(
    `SELECT status, "createdBy", "scriptPath", total, chunk, length(chunk)::int AS "chunkChars"
       FROM (SELECT j.status, j.created_by AS "createdBy", j.script_path AS "scriptPath", coalesce(length(l.logs), 0)::int AS total,
                    coalesce(substr(l.logs, $3 + 1, $4), '') AS chunk
               FROM job j LEFT JOIN job_log l ON l.job_id = j.id
              WHERE j.id = $1 AND j.workspace_id = $2) s`,
    [id, membership.workspace.id, Math.min(offset, MAX_INT), Math.min(maxChars, MAX_INT)],
  );
  const row = rows[0];
  if (!row || !(await canSeeJob(ctx, membership, row))) throw notFound(`job ${id}`);
  return row;
}

function checkAccess(membership: Membership, id: string, logOffset: number): void {
  requirePermission(membership, "job.read");
  if (!isJobId(id)) throw notFound(`job ${id}`);
  if (!Number.isSafeInteger(logOffset) || logOffset < 0) {
    throw invalidInput("log_offset", "must be a whole number, 0 or more");
  }
}

async function finishedJob(ctx: JobsContext, membership: Membership, id: string): Promise<Job | undefined> {
  const job = await ctx.db.job.findFirst({ where: { id, workspaceId: membership.workspace.id } });
  return job ?? undefined;
}

async function readUpdate(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  logOffset: number,
  maxChars: number,
  withJob: boolean,
): Promise<JobUpdate> {
  const snapshot = await readSnapshot(ctx, membership, id, logOffset, maxChars);
  // An offset past the end (a client's stale number) resumes from the end rather than failing.
  const offset = Math.min(logOffset, snapshot.total) + snapshot.chunkChars;
  const completed = isFinished(snapshot) && offset >= snapshot.total;
  return {
    running: snapshot.status === "running",
    completed,
    newLogs: snapshot.chunk,
    logOffset: offset,
    ...(offset < snapshot.total ? { moreLogs: true } : {}),
    ...(completed && withJob ? { job: await finishedJob(ctx, membership, id) } : {}),
  };
}

/** One look at a job: its state and the log after `logOffset` (Windmill's getJobUpdates). */
export async function getJobUpdate(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  logOffset = 0,
): Promise<JobUpdate> {
  checkAccess(membership, id, logOffset);
  return readUpdate(ctx, membership, id, logOffset, Number.MAX_SAFE_INTEGER, false);
}

export interface StreamOptions {
  /** Log characters the viewer already has. */
  logOffset?: number;
  /** Stops the stream (the viewer went away). */
  signal?: AbortSignal;
  /** Safety-net re-read while the job runs, in case a notification was lost. */
  pollMs?: number;
  /** Re-read while the job is queued: nothing notifies when a worker starts it. */
  queuedPollMs?: number;
}

/**
 * The updates of a job until it completes: first its current state, then an update whenever its
 * log grows or its state changes, ending with the completed update (which carries the job). All
 * state is read from the database — a notification only says "look again" — so a viewer that
 * reconnects anywhere with its last `logOffset` continues exactly where it left off. Access is
 * checked on the first read (NOT_FOUND for another workspace's job), before anything is yielded.
 */
export async function* streamJobUpdates(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  options: StreamOptions = {},
): AsyncGenerator<JobUpdate, void, undefined> {
  let offset = options.logOffset ?? 0;
  checkAccess(membership, id, offset);
  const { signal, pollMs = 5000, queuedPollMs = 1000 } = options;

  let poked = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    poked = true;
    wake?.();
  };
  // Subscribed before the first read, so nothing that happens after it can be missed.
  const unsubscribe = [ctx.events.on(JOB_LOG_CHANNEL, id, poke), ctx.events.on(JOB_DONE_CHANNEL, id, poke)];
  await Promise.all([ctx.events.listening(JOB_LOG_CHANNEL), ctx.events.listening(JOB_DONE_CHANNEL)]).catch(
    () => {},
  );
  signal?.addEventListener("abort", poke);
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (poked || signal?.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  try {
    let last: { running: boolean } | null = null;
    while (!signal?.aborted) {
      poked = false;
      const update = await readUpdate(ctx, membership, id, offset, MAX_UPDATE_LOG_CHARS, true);
      const changed =
        last === null || update.newLogs !== "" || update.running !== last.running || update.completed;
      offset = update.logOffset;
      if (changed) yield update;
      if (update.completed) return;
      last = update;
      // More log is waiting beyond this update's share: send it without waiting for a wake-up.
      if (update.moreLogs) continue;
      await sleep(update.running ? pollMs : Math.min(queuedPollMs, pollMs));
    }
  } finally {
    for (const off of unsubscribe) off();
    signal?.removeEventListener("abort", poke);
  }
}
