import {
  claimJobs,
  millraceMetrics,
  nextDueTag,
  releaseClaimedJobs,
  requeueAbandonedJobs,
  type Boss,
  type ClaimedJob,
} from "@millrace/core";
import type { Pool } from "@millrace/db";
import { ClaimPause } from "./claim-pause.ts";
import { CompletionBatcher } from "./completion-batcher.ts";
import type { SlotState } from "./heartbeat.ts";
import { JobDurations } from "./job-durations.ts";
import { WakeSignal } from "./notifications.ts";
import { runClaimedJob, type RunJobDeps } from "./run-job.ts";

// Rechecked even without a notification: deferred jobs become due, and a lost LISTEN connection
// must not stall the queue.
const IDLE_RECHECK_MS = 1000;
// At most this many jobs claimed in one pg-boss fetch (bounded by free slots).
const MAX_CLAIM_BATCH = 500;
const STICKY_TAG_MS = 250;
const CLAIM_LOOPS = 2;
// Claiming ahead: a busy slot whose job is expected to end within this many ms gets its next job
// claimed now, so it starts the moment the slot frees instead of one claim round trip later.
const CLAIM_AHEAD_MS = 25;
// Only for short jobs (where a claim round trip is a visible share of the run): a long job's end is
// hard to predict, and a job claimed ahead is one no other worker can take meanwhile.
const CLAIM_AHEAD_MAX_JOB_MS = 2000;
// A running job of this worker's slots that it does not hold is put back only once it was claimed
// this long ago (see reconcile).
const RECONCILE_GRACE_SECS = 10;
// A job claimed ahead that found no slot in this time goes back to the queue for any worker.
const CLAIM_AHEAD_HOLD_MS = 1000;

interface RunningJob {
  job: ClaimedJob;
  /** Null while the job waits in `ahead` for a slot. */
  slot: SlotState | null;
  controller: AbortController;
  cancelReason: string | null;
  /** performance.now() when it was claimed, then when it started. */
  since: number;
  /** Wall-clock start, recorded for jobs that waited after their claim. */
  startedAt?: Date;
}

/**
 * One claim loop per worker process: it fetches as many jobs as it has free slots, runs each in
 * its slot and hands the completions to a batcher, so a slot is free again as soon as its job's
 * process exits, while the result is being committed.
 */
export class Dispatcher {
  readonly wake = new WakeSignal();
  /** Claimed jobs, running or waiting in `ahead`. */
  private readonly running = new Map<string, RunningJob>();
  /** Jobs claimed ahead for slots about to free (oldest first). */
  private readonly ahead: RunningJob[] = [];
  /** Ahead claims in flight (two claim loops must not both claim for the same busy slot). */
  private aheadClaiming = 0;
  private readonly durations = new JobDurations();
  private readonly slotCount: number;
  private readonly free: SlotState[];
  private readonly batcher: CompletionBatcher;
  private stopping = false;
  private loop: Promise<void> | null = null;
  private tags: readonly string[];
  private readonly deps: RunJobDeps & { pool: Pool; boss: Boss; claimPool: Pool };
  private readonly log: (message: string) => void;
  private readonly pause: ClaimPause;
  /** Fenced (see fence.ts): its jobs were killed and it claims nothing until `unfence`. */
  private fencedNow = false;
  /** Jobs killed by the fence: they go back to the queue (as zombies) once the database answers. */
  private readonly fencedJobs = new Map<string, { id: string; bossJobId: string; workerName: string }>();
  /** Jobs claimed but never started when the fence came (claimed ahead, handed over). */
  private readonly fencedUnstarted = new Map<string, ClaimedJob>();

  constructor(
    deps: RunJobDeps & { pool: Pool; boss: Boss; claimPool: Pool },
    slots: SlotState[],
    tags: readonly string[],
    log: (message: string) => void,
  ) {
    this.deps = deps;
    this.free = [...slots];
    this.slotCount = slots.length;
    this.tags = tags;
    this.log = log;
    this.batcher = new CompletionBatcher(deps.pool, deps.boss, log);
    this.pause = new ClaimPause(deps.pool, log);
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

  /**
   * Puts back in the queue the jobs the database says run in this worker's slots but that it does
   * not hold (not running, not claimed ahead, no completion pending): a claim whose answer was
   * lost with its connection (the statement committed, the worker never saw the rows). Such a
   * job would stay `running` for good, since its slot keeps pinging. Jobs claimed in the last
   * RECONCILE_GRACE_SECS are left alone: their claim's answer may still be on its way.
   */
  async reconcile(slotNames: readonly string[]): Promise<void> {
    if (this.stopping || this.fencedNow) return;
    const { rows } = await this.deps.pool.query<{ id: string; boss_job_id: string; worker_name: string }>(
      `SELECT id, boss_job_id, worker_name FROM job
        WHERE status = 'running' AND worker_name = ANY($1) AND started_at < now() - make_interval(secs => $2)`,
      [slotNames, RECONCILE_GRACE_SECS],
    );
    const held = new Set([
      ...this.running.keys(),
      ...this.batcher.heldJobIds(),
      ...this.fencedJobs.keys(),
      ...this.fencedUnstarted.keys(),
    ]);
    const orphans = rows.filter((row) => !held.has(row.id));
    if (orphans.length === 0 || this.stopping) return;
    await requeueAbandonedJobs(
      this.deps.pool,
      this.deps.boss,
      orphans.map((row) => ({ id: row.id, bossJobId: row.boss_job_id, workerName: row.worker_name })),
      "does not hold this job (the answer to its claim was lost)",
    );
    this.log(`put ${orphans.length} job(s) this worker never received back in the queue`);
  }

  get fenced(): boolean {
    return this.fencedNow;
  }

  /**
   * Self-fencing (see fence.ts): the worker has not had a heartbeat committed for long enough that
   * the zombie monitor may soon hand its jobs to another worker. Kills every running job's
   * process group now (their outcome and remaining output are never reported), drops the jobs
   * claimed but not started, and stops claiming. Completions already handed to the batcher stay:
   * those jobs did finish, and a completion arriving after the job was put back is refused
   * (`boss_job_id`). Answers how many running jobs were killed.
   */
  fence(): number {
    this.fencedNow = true;
    let killed = 0;
    for (const entry of this.ahead.splice(0)) {
      this.running.delete(entry.job.id);
      this.fencedUnstarted.set(entry.job.id, entry.job);
    }
    for (const entry of this.running.values()) {
      if (entry.controller.signal.aborted) continue;
      entry.controller.abort("fence");
      killed++;
    }
    return killed;
  }

  /**
   * The database answers again: the fenced jobs go back to the queue (counted as zombie restarts,
   * unless the zombie monitor already did it: only their claimed dispatch is put back), those
   * never started are released, and claiming resumes. Throws (and stays fenced) if the database
   * is away again; called again on the next answered ping.
   */
  async unfence(zombie: { restart: boolean }, silentSecs: number): Promise<number> {
    // Their processes were killed at the fence: wait for their runs to notice.
    while ([...this.fencedJobs.keys()].some((id) => this.running.has(id)))
      await new Promise((resolve) => setTimeout(resolve, 20));
    const fenced = [...this.fencedJobs.values()];
    if (fenced.length > 0) {
      await requeueAbandonedJobs(
        this.deps.pool,
        this.deps.boss,
        fenced,
        `fenced itself (no heartbeat reached the database for ${silentSecs} s) and killed the job`,
        zombie,
      );
    }
    const unstarted = [...this.fencedUnstarted.values()];
    if (unstarted.length > 0) await releaseClaimedJobs(this.deps.pool, this.deps.boss, unstarted);
    this.fencedJobs.clear();
    this.fencedUnstarted.clear();
    this.fencedNow = false;
    this.wake.wakeAll();
    return fenced.length;
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
    this.drainedUntil.delete(tag);
    this.hints++;
    if (!(this.hinted?.tag === tag && this.hinted.until > now)) this.hinted = { tag, until: now + forMs };
    this.wake.wakeAll();
  }

  /**
   * Tags a fetch or the which-tag-is-due query found with nothing due, until when that is trusted
   * without asking again: a job queued since would have sent a notification (see hint), and one
   * deferred until now is found at the next look, IDLE_RECHECK_MS later at most, as an idle loop
   * finds it. A slot that frees then asks nothing: without this, every job's end cost the worker
   * a which-tag-is-due query that found nothing (0.4 a job on 8 slots fed one job at a time).
   */
  private readonly drainedUntil = new Map<string, number>();
  /** Hints so far: a look that a hint came during may be stale, and marks nothing drained. */
  private hints = 0;

  private markDrained(tags: readonly string[]): void {
    const until = Date.now() + IDLE_RECHECK_MS;
    for (const tag of tags) this.drainedUntil.set(tag, until);
  }

  private allDrained(): boolean {
    const now = Date.now();
    return this.tags.every((tag) => (this.drainedUntil.get(tag) ?? 0) > now);
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
    // Not started yet: it never will be; record it as canceled now.
    const waiting = this.ahead.indexOf(entry);
    if (waiting >= 0) {
      this.ahead.splice(waiting, 1);
      this.running.delete(jobId);
      this.batcher
        .add({
          job: entry.job,
          outcome: {
            status: "canceled",
            result: { error: { name: "Canceled", message: reason ?? "job canceled" } },
          },
          pendingLog: "",
        })
        .catch((error: Error) => this.log(`could not record job ${jobId}: ${error.message}`));
    }
  }

  /**
   * Busy slots whose job should end within CLAIM_AHEAD_MS, beyond those already covered by a job
   * claimed ahead: the number of jobs worth claiming now although no slot is free. Also returns
   * how long until the next slot enters that window (to wake up then).
   */
  private aheadWanted(now: number): { count: number; names: string[]; wakeInMs: number } {
    const names: string[] = [];
    let wakeInMs = IDLE_RECHECK_MS;
    for (const entry of this.running.values()) {
      if (!entry.slot) continue;
      const expected = this.durations.expected(entry.job);
      if (expected === null || expected > CLAIM_AHEAD_MAX_JOB_MS) continue;
      const untilWindow = entry.since + expected - CLAIM_AHEAD_MS - now;
      if (untilWindow <= 0) names.push(entry.slot.name);
      else wakeInMs = Math.min(wakeInMs, untilWindow);
    }
    const count = Math.max(
      0,
      Math.min(names.length, this.slotCount) - this.ahead.length - this.aheadClaiming,
    );
    return { count, names: names.slice(0, count), wakeInMs: Math.max(1, wakeInMs) };
  }

  /** Jobs claimed ahead that waited too long go back to the queue (their prediction was wrong). */
  private releaseStaleAhead(now: number): void {
    const stale = this.ahead.filter((entry) => now - entry.since > CLAIM_AHEAD_HOLD_MS);
    if (stale.length === 0) return;
    for (const entry of stale) {
      this.ahead.splice(this.ahead.indexOf(entry), 1);
      this.running.delete(entry.job.id);
    }
    void releaseClaimedJobs(
      this.deps.pool,
      this.deps.boss,
      stale.map((entry) => entry.job),
    ).catch((error: Error) => this.log(`could not release jobs claimed ahead: ${error.message}`));
  }

  private async claimLoop(): Promise<void> {
    while (!this.stopping) {
      try {
        this.releaseStaleAhead(performance.now());
        const wanted = this.free.length === 0 ? this.aheadWanted(performance.now()) : null;
        if (wanted && wanted.count === 0) {
          await this.wake.wait(this.wake.current(), wanted.wakeInMs);
          continue;
        }
        // Let slots freed in this same turn (jobs that ended together) join this claim: one fetch
        // for all of them instead of one round trip each.
        await new Promise<void>((resolve) => setImmediate(resolve));
        const seen = this.wake.current();
        const hintsSeen = this.hints;
        // `millrace backup restore` is replacing the database: claim nothing until it is done.
        // Nor while fenced (see fence).
        if (this.fencedNow || (await this.pause.isPaused())) {
          await this.wake.wait(seen, IDLE_RECHECK_MS);
          continue;
        }
        const drained = this.allDrained();
        const tag = this.hintedTag() ?? (drained ? null : await nextDueTag(this.deps.pool, this.tags));
        if (!tag && !drained && this.hints === hintsSeen) this.markDrained(this.tags);
        if (!tag || this.stopping) {
          await this.wake.wait(seen, IDLE_RECHECK_MS);
          continue;
        }
        // The other claim loop may have taken every free slot meanwhile.
        const slots = this.free.splice(0, Math.min(this.free.length, MAX_CLAIM_BATCH));
        const ahead = slots.length === 0 ? this.aheadWanted(performance.now()) : null;
        if (slots.length === 0 && !ahead?.count) continue;
        const names = slots.length > 0 ? slots.map((slot) => slot.name) : ahead!.names;
        if (ahead) this.aheadClaiming += names.length;
        let jobs: ClaimedJob[] = [];
        try {
          jobs = await claimJobs(this.deps.pool, this.deps.boss, tag, names, this.deps.claimPool);
        } finally {
          if (ahead) this.aheadClaiming -= names.length;
          const used = new Set(jobs.map((job) => job.workerName));
          this.free.push(...slots.filter((slot) => !used.has(slot.name)));
        }
        const slotByName = new Map(slots.map((slot) => [slot.name, slot]));
        if (this.fencedNow) {
          // The fence came while this claim was in flight: these never start here.
          for (const job of jobs) {
            this.fencedUnstarted.set(job.id, job);
            const slot = slotByName.get(job.workerName);
            if (slot) this.free.push(slot);
          }
          jobs = [];
        }
        for (const job of jobs) {
          const slot = slotByName.get(job.workerName);
          if (slot) this.run(this.track(job), slot);
          else this.ahead.push(this.track(job));
        }
        // A slot may have freed while this claim was in flight, with nothing ahead to take.
        while (this.ahead.length > 0 && this.free.length > 0)
          this.run(this.ahead.shift()!, this.free.shift()!);
        // A tag that filled every slot asked probably has more: fetch it again directly (one query
        // less per claim) for a short while, then look at all tags again for fairness. One that
        // filled fewer was drained by this fetch: fetching it again would find nothing (a pg-boss
        // fetch costs several times the which-tag-is-due query, and jobs arriving one at a time
        // made this a second, empty fetch per job), so the next turn asks which tag is due, unless
        // every tag is known drained (see drainedUntil).
        if (jobs.length > 0 && jobs.length === names.length) this.hint(tag, STICKY_TAG_MS);
        else if (jobs.length > 0 && this.hinted?.tag === tag) this.hinted = null;
        // Fewer than asked: the fetch took every job of the tag that was due.
        if (jobs.length < names.length && this.hints === hintsSeen) this.markDrained([tag]);
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

  private track(job: ClaimedJob): RunningJob {
    const entry: RunningJob = {
      job,
      slot: null,
      controller: new AbortController(),
      cancelReason: null,
      since: performance.now(),
    };
    this.running.set(job.id, entry);
    return entry;
  }

  private run(entry: RunningJob, slot: SlotState, handedOver = false): void {
    const { job } = entry;
    const claimedAt = entry.since;
    entry.slot = slot;
    entry.since = performance.now();
    // Claimed ahead, or by the transaction that completed the slot's previous job (before its
    // commit): the job's recorded start becomes the moment it really started.
    if (handedOver || entry.since - claimedAt > 1) entry.startedAt = new Date();
    slot.currentJobId = job.id;
    slot.occupancy.start();
    const metrics = millraceMetrics();
    metrics.jobsStarted.inc({ tag: job.tag });
    if (job.scheduledFor) {
      const waited = (Date.now() - job.scheduledFor.getTime()) / 1000;
      metrics.jobQueueWait.observe({ tag: job.tag }, Math.max(0, waited));
    }
    let handover: Promise<ClaimedJob | null> | null = null;
    void runClaimedJob(this.deps, job, entry.controller.signal, () => entry.cancelReason)
      .then((completion) => {
        if (!completion && entry.controller.signal.reason === "fence") {
          this.fencedJobs.set(job.id, { id: job.id, bossJobId: job.bossJobId, workerName: slot.name });
          this.log(`job ${job.id} killed by the fence: its outcome is not reported`);
        }
        const ranMs = performance.now() - entry.since;
        if (!entry.controller.signal.aborted) this.durations.record(job, ranMs);
        // The slot is free as soon as the job's process is gone; its completion is committed in
        // the background (batched with others). A crash before that commit leaves the job
        // running, and the zombie monitor restarts it: the same as a crash during the job.
        // A flow step's slot instead waits for the commit, which may hand it the flow's next step.
        if (completion) {
          if (entry.startedAt) completion.startedAt = entry.startedAt;
          if (job.parentJobId && !this.stopping) {
            completion.continueIn = { workerName: slot.name, tags: this.tags };
          }
          const recorded = this.batcher.add(completion);
          recorded.then(
            () => {
              metrics.jobsCompleted.inc({ tag: job.tag, status: completion.outcome.status });
              metrics.jobDuration.observe({ tag: job.tag, language: job.language }, ranMs / 1000);
            },
            (error: Error) => this.log(`could not record job ${job.id}: ${error.message}`),
          );
          if (completion.continueIn) handover = recorded.catch(() => null);
        }
      })
      .finally(() => {
        this.running.delete(job.id);
        slot.currentJobId = null;
        slot.jobsExecuted++;
        slot.occupancy.end();
        if (!handover) return this.nextInSlot(slot, null);
        const done = handover.then((next) => this.nextInSlot(slot, next));
        this.handovers.add(done);
        void done.finally(() => this.handovers.delete(done));
      });
  }

  /** Hand-overs (see run) whose slot does not know its next job yet. */
  private readonly handovers = new Set<Promise<void>>();

  /** The slot's next job: the one handed over to it, else one claimed ahead; else it is free. */
  private async nextInSlot(slot: SlotState, handedOver: ClaimedJob | null): Promise<void> {
    if (handedOver && this.fencedNow) this.fencedUnstarted.set(handedOver.id, handedOver);
    else if (handedOver && !this.stopping) return this.run(this.track(handedOver), slot, true);
    else if (handedOver) {
      // Stopping: it never started here, and any worker may run it.
      await releaseClaimedJobs(this.deps.pool, this.deps.boss, [handedOver]).catch((error: Error) =>
        this.log(`could not release job ${handedOver.id}: ${error.message}`),
      );
    }
    // A job claimed ahead takes the slot at once; the claim loop tops the ahead list up.
    const next = this.stopping ? undefined : this.ahead.shift();
    if (next) this.run(next, slot);
    else this.free.push(slot);
    this.wake.wakeAll();
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
    // Jobs claimed ahead never started here: any worker may run them.
    const unstarted = this.ahead.splice(0);
    for (const entry of unstarted) this.running.delete(entry.job.id);
    if (unstarted.length > 0) {
      await releaseClaimedJobs(
        this.deps.pool,
        this.deps.boss,
        unstarted.map((entry) => entry.job),
      );
    }
    const deadline = Date.now() + graceMs;
    while (this.running.size > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const abandoned = [...this.running.values()];
    for (const entry of abandoned) entry.controller.abort("shutdown");
    while (this.running.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await this.batcher.flush();
    // Jobs handed over by those last completions go back to the queue (see nextInSlot).
    while (this.handovers.size > 0) await Promise.all(this.handovers);
    if (abandoned.length > 0) {
      await requeueAbandonedJobs(
        this.deps.pool,
        this.deps.boss,
        abandoned.map((entry) => ({
          id: entry.job.id,
          bossJobId: entry.job.bossJobId,
          workerName: entry.slot?.name ?? entry.job.workerName,
        })),
      );
      this.log(`put ${abandoned.length} unfinished job(s) back in the queue`);
    }
  }
}
