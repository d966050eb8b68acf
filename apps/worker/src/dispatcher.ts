import { claimJobs, nextDueTag, requeueAbandonedJobs, type Boss, type ClaimedJob } from "@millrace/core";
import type { Pool } from "@millrace/db";
import { CompletionBatcher } from "./completion-batcher.ts";
import type { SlotState } from "./heartbeat.ts";
import { WakeSignal } from "./notifications.ts";
import { runClaimedJob, type RunJobDeps } from "./run-job.ts";

// Rechecked even without a notification: deferred jobs become due, and a lost LISTEN connection
// must not stall the queue.
const IDLE_RECHECK_MS = 1000;
// At most this many jobs claimed in one pg-boss fetch (bounded by free slots).
const MAX_CLAIM_BATCH = 500;
const STICKY_TAG_MS = 250;
const CLAIM_LOOPS = 2;

interface RunningJob {
  job: ClaimedJob;
  slot: SlotState;
  controller: AbortController;
  cancelReason: string | null;
}

/**
 * One claim loop per worker process: it fetches as many jobs as it has free slots, runs each in
 * its slot and hands the completions to a batcher, so a slot is free again as soon as its job's
 * process exits, while the result is being committed.
 */
export class Dispatcher {
  readonly wake = new WakeSignal();
  private readonly running = new Map<string, RunningJob>();
  private readonly free: SlotState[];
  private readonly batcher: CompletionBatcher;
  private stopping = false;
  private loop: Promise<void> | null = null;
  private tags: readonly string[];
  private readonly deps: RunJobDeps & { boss: Boss; claimPool: Pool };
  private readonly log: (message: string) => void;

  constructor(
    deps: RunJobDeps & { boss: Boss; claimPool: Pool },
    slots: SlotState[],
    tags: readonly string[],
    log: (message: string) => void,
  ) {
    this.deps = deps;
    this.free = [...slots];
    this.tags = tags;
    this.log = log;
    this.batcher = new CompletionBatcher(deps.pool, deps.boss);
  }

  get pool(): Pool {
    return this.deps.pool;
  }

  setTags(tags: readonly string[]): void {
    this.tags = tags;
    this.wake.wakeAll();
  }

  runningJobIds(): string[] {
    return [...this.running.keys()];
  }

  start(): void {
    // Two claim loops: slots freed while one claim is in flight are claimed at once by the other
    // instead of waiting for it (a claim is a few ms; with one loop, slots that free at different
    // moments queue behind each other's claims).
    this.loop ??= Promise.all(
      Array.from({ length: Math.min(CLAIM_LOOPS, this.free.length) }, () => this.claimLoop()),
    ).then(() => {});
  }

  private hinted: { tag: string; until: number } | null = null;

  /**
   * A tag worth fetching from directly, skipping the which-tag-is-due query, for `forMs`. A hint
   * for the tag already hinted does not extend it, so other tags are looked at again soon.
   */
  hint(tag: string, forMs: number): void {
    const now = Date.now();
    if (!this.tags.includes(tag)) return;
    if (!(this.hinted?.tag === tag && this.hinted.until > now)) this.hinted = { tag, until: now + forMs };
    this.wake.wakeAll();
  }

  private hintedTag(): string | null {
    const hinted = this.hinted;
    return hinted && hinted.until >= Date.now() && this.tags.includes(hinted.tag) ? hinted.tag : null;
  }

  /** Kills a running job (cancel request); its completion records it as canceled. */
  cancel(jobId: string, reason: string | null): void {
    const entry = this.running.get(jobId);
    if (!entry || entry.controller.signal.aborted) return;
    entry.cancelReason = reason;
    entry.controller.abort("cancel");
  }

  private async claimLoop(): Promise<void> {
    while (!this.stopping) {
      try {
        if (this.free.length === 0) {
          await this.wake.wait(this.wake.current(), IDLE_RECHECK_MS);
          continue;
        }
        // Let slots freed in this same turn (jobs that ended together) join this claim: one fetch
        // for all of them instead of one round trip each.
        await new Promise<void>((resolve) => setImmediate(resolve));
        const seen = this.wake.current();
        const tag = this.hintedTag() ?? (await nextDueTag(this.deps.pool, this.tags));
        if (!tag || this.stopping) {
          await this.wake.wait(seen, IDLE_RECHECK_MS);
          continue;
        }
        // The other claim loop may have taken every free slot meanwhile.
        if (this.free.length === 0) continue;
        const slots = this.free.splice(0, Math.min(this.free.length, MAX_CLAIM_BATCH));
        let jobs: ClaimedJob[] = [];
        try {
          jobs = await claimJobs(
            this.deps.pool,
            this.deps.boss,
            tag,
            slots.map((slot) => slot.name),
            this.deps.claimPool,
          );
        } finally {
          const used = new Set(jobs.map((job) => job.workerName));
          this.free.push(...slots.filter((slot) => !used.has(slot.name)));
        }
        for (const job of jobs)
          this.run(
            job,
            slots.find((slot) => slot.name === job.workerName)!,
          );
        // A tag that just yielded jobs probably has more: fetch it again directly (one query less
        // per claim) for a short while, then look at all tags again for fairness.
        if (jobs.length > 0) this.hint(tag, STICKY_TAG_MS);
        // Nothing claimable although a job looked due (deferred, or claimed by another worker).
        if (jobs.length === 0) {
          if (this.hinted?.tag === tag) this.hinted = null;
          await this.wake.wait(seen, 100);
        }
      } catch (error) {
        if (this.stopping) break;
        this.log(`claim loop error: ${error instanceof Error ? error.message : String(error)}`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  private run(job: ClaimedJob, slot: SlotState): void {
    const entry: RunningJob = { job, slot, controller: new AbortController(), cancelReason: null };
    this.running.set(job.id, entry);
    slot.currentJobId = job.id;
    slot.occupancy.start();
    void runClaimedJob(this.deps, job, entry.controller.signal, () => entry.cancelReason)
      .then((completion) => {
        // The slot is free as soon as the job's process is gone; its completion is committed in
        // the background (batched with others). A crash before that commit leaves the job
        // running, and the zombie monitor restarts it: the same as a crash during the job.
        if (completion) {
          this.batcher.add(completion).catch((error: Error) => {
            this.log(`could not record job ${job.id}: ${error.message}`);
          });
        }
      })
      .finally(() => {
        this.running.delete(job.id);
        slot.currentJobId = null;
        slot.jobsExecuted++;
        slot.occupancy.end();
        this.free.push(slot);
        this.wake.wakeAll();
      });
  }

  /**
   * Stops claiming, lets running jobs finish for `graceMs`, then puts the ones still running back
   * in the queue (their processes are killed) so that another worker runs them: nothing held is
   * lost. Resolves once every completion is durable.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.wake.wakeAll();
    await this.loop;
    const deadline = Date.now() + graceMs;
    while (this.running.size > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const abandoned = [...this.running.values()];
    for (const entry of abandoned) entry.controller.abort("shutdown");
    while (this.running.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await this.batcher.flush();
    if (abandoned.length > 0) {
      await requeueAbandonedJobs(
        this.deps.pool,
        this.deps.boss,
        abandoned.map((entry) => ({
          id: entry.job.id,
          bossJobId: entry.job.bossJobId,
          workerName: entry.slot.name,
        })),
      );
      this.log(`put ${abandoned.length} unfinished job(s) back in the queue`);
    }
  }
}
