import { completeJobs, type Boss, type ClaimedJob, type Completion } from "@millrace/core";
import { isTransientDatabaseError, type Pool } from "@millrace/db";

// Backoff between attempts while the database cannot be reached (it restarts, fails over).
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5000;

interface Entry {
  completion: Completion;
  /** With the job handed to the completion's slot (Completion.continueIn), if any. */
  resolve: (continuation: ClaimedJob | null) => void;
  reject: (error: unknown) => void;
}

/**
 * A completion that could not be stored as it was (its data, not the database, was at fault):
 * the job fails with the reason instead, so that it ends rather than staying `running`.
 */
function unrecordable(completion: Completion, error: unknown): Completion {
  const reason = error instanceof Error ? error.message : String(error);
  const message = `the job ended but its outcome could not be stored: ${reason}`;
  return {
    ...completion,
    outcome: { status: "failure", result: { error: { name: "ResultNotStored", message } } },
    // The output flushed so far stays; what was pending may be what could not be stored.
    pendingLog: `\n[millrace] ${message}\n`,
  };
}

/**
 * Records completions in as few transactions as possible without adding latency: a completion
 * that arrives while no write is in flight is written at once; those that arrive during a write
 * go together in the next one. Under load this turns N commits into one.
 *
 * Every job the worker ran ends: a completion is retried, in order, for as long as the database
 * cannot be reached (a restart, a failover), so a job that finished during an outage is recorded
 * once it is back rather than run again; one whose data the database refuses is recorded as
 * failed with the reason. The worker holds such jobs meanwhile (it keeps pinging, and a job's
 * end is never re-run for a restarted database: see handleZombieJobs).
 */
export class CompletionBatcher {
  private pending: Entry[] = [];
  private writing: Promise<void> | null = null;
  private readonly pool: Pool;
  private readonly boss: Boss;
  private readonly log: (message: string) => void;

  constructor(pool: Pool, boss: Boss, log: (message: string) => void = () => {}) {
    this.pool = pool;
    this.boss = boss;
    this.log = log;
  }

  /**
   * Resolves once the completion is durable, with the job it handed to the completion's slot
   * (Completion.continueIn) if it handed one.
   */
  add(completion: Completion): Promise<ClaimedJob | null> {
    const id = completion.job.id;
    this.held.add(id);
    return new Promise<ClaimedJob | null>((resolve, reject) => {
      this.pending.push({ completion, resolve, reject });
      this.writing ??= this.drain();
    }).finally(() => this.held.delete(id));
  }

  /** Jobs added whose completion is not durable yet (pending, being written, or retried later). */
  private readonly held = new Set<string>();

  heldJobIds(): Iterable<string> {
    return this.held;
  }

  /** Jobs whose completion is not yet durable. */
  get waiting(): number {
    return this.pending.length;
  }

  private async drain(): Promise<void> {
    let delay = RETRY_FIRST_MS;
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, 500);
      const unsent = await this.write(batch);
      if (unsent.length === 0) {
        delay = RETRY_FIRST_MS;
        continue;
      }
      // The database is unreachable: keep them first in line and try again.
      this.pending.unshift(...unsent);
      if (delay === RETRY_FIRST_MS) {
        this.log(`cannot record ${this.pending.length} finished job(s) yet (database unreachable); retrying`);
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
    this.writing = null;
  }

  /** Writes a batch; returns the entries the database could not be reached for. */
  private async write(batch: Entry[]): Promise<Entry[]> {
    try {
      const continued = await completeJobs(
        this.pool,
        this.boss,
        batch.map((entry) => entry.completion),
      );
      for (const entry of batch) entry.resolve(continued.get(entry.completion.job.id) ?? null);
      return [];
    } catch (error) {
      if (isTransientDatabaseError(error)) return batch;
    }
    // One bad row must not lose the others: one by one, and an unstorable one as a failure.
    for (const [index, entry] of batch.entries()) {
      try {
        const continued = await completeJobs(this.pool, this.boss, [entry.completion]);
        entry.resolve(continued.get(entry.completion.job.id) ?? null);
      } catch (error) {
        if (isTransientDatabaseError(error)) return batch.slice(index);
        try {
          const continued = await completeJobs(this.pool, this.boss, [unrecordable(entry.completion, error)]);
          entry.resolve(continued.get(entry.completion.job.id) ?? null);
        } catch (fallbackError) {
          entry.completion = unrecordable(entry.completion, error);
          if (isTransientDatabaseError(fallbackError)) return batch.slice(index);
          // Even the smallest record was refused. Giving up would leave the job `running` under a
          // worker that keeps pinging, which no zombie check ever ends: try again later instead,
          // behind the others.
          const reason = fallbackError instanceof Error ? fallbackError.message : String(fallbackError);
          this.log(`could not record job ${entry.completion.job.id} yet (${reason}); trying again`);
          setTimeout(() => {
            this.pending.push(entry);
            this.writing ??= this.drain();
          }, RETRY_MAX_MS);
        }
      }
    }
    return [];
  }

  /** Resolves once everything added so far is durable. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }
}
