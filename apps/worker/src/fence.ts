// Self-fencing (issue 38): a worker that can no longer prove to the database that it is alive
// kills its running jobs before the zombie monitor could hand them to another worker, so that no
// job ever runs on two workers at once.
//
// The zombie monitor (packages/core maintenance/zombies.ts) puts a running job back in the queue
// once its slot's worker_ping.last_ping_at is more than ZOMBIE_JOB_TIMEOUT (T) old, by the
// database's clock. A ping sets last_ping_at = now() when the database runs it, which is after the
// worker sent it; so once a ping is known committed (its answer came back), the monitor cannot
// take the worker's jobs before T has passed since the moment that ping was *sent*, whatever
// happens to the later pings. The worker fences at half of that: FENCE_FRACTION × T after the
// sending of its last answered ping (30 s with the default T of 60 s), leaving the other half (and
// the monitor's own check interval) for the kill to take effect. A job claimed after that ping
// has a later started_at, which the monitor also requires to be T old: the same bound holds.
//
// An agent worker does the same with the answers of the server's ping route (the server writes
// its worker_ping rows before answering).

/** Share of ZOMBIE_JOB_TIMEOUT after the last answered heartbeat at which a worker fences. */
export const FENCE_FRACTION = 0.5;
/** The servers' default ZOMBIE_JOB_TIMEOUT, used until the leader's published value is known. */
export const DEFAULT_ZOMBIE_JOB_TIMEOUT_SECS = 60;
// Pings go out at least this many times per fence delay: a fence needs that many lost in a row.
const PINGS_PER_FENCE = 4;
const CHECK_MS = 200;

export interface FenceOptions {
  /** The zombie monitor's timeout (s) as known so far (see setTimeoutSecs). */
  timeoutSecs?: number;
  /** Called once when the fence delay passes without an answered heartbeat. */
  onFence: (silentMs: number) => void;
  /** Clock (ms, monotonic); performance.now by default. */
  now?: () => number;
}

export class Fence {
  private timeoutSecs: number;
  /** When the last heartbeat known committed was sent (monotonic ms). */
  private lastAnsweredSentAt: number;
  private fencedNow = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly onFence: (silentMs: number) => void;
  private readonly now: () => number;

  constructor(options: FenceOptions) {
    this.now = options.now ?? (() => performance.now());
    this.timeoutSecs = options.timeoutSecs ?? DEFAULT_ZOMBIE_JOB_TIMEOUT_SECS;
    this.onFence = options.onFence;
    // Nothing is claimed before the fence exists: every job's started_at is later than this.
    this.lastAnsweredSentAt = this.now();
  }

  /** Whether the worker is fenced (its jobs were killed; it must not claim). */
  get fenced(): boolean {
    return this.fencedNow;
  }

  /** Milliseconds without an answered heartbeat after which the worker fences. */
  get fenceAfterMs(): number {
    return this.timeoutSecs * 1000 * FENCE_FRACTION;
  }

  /** The zombie monitor's timeout as the leader published it (or the server answered it). */
  setTimeoutSecs(timeoutSecs: number): void {
    if (timeoutSecs > 0) this.timeoutSecs = timeoutSecs;
  }

  get zombieTimeoutSecs(): number {
    return this.timeoutSecs;
  }

  /** How often to ping: the configured interval, or more often when the fence delay is short. */
  pingIntervalMs(configuredMs: number): number {
    return Math.max(50, Math.min(configuredMs, this.fenceAfterMs / PINGS_PER_FENCE));
  }

  /** Call right before sending a heartbeat; call what it returns once the heartbeat is committed. */
  sending(): () => void {
    const sentAt = this.now();
    return () => this.answered(sentAt);
  }

  private answered(sentAt: number): void {
    this.lastAnsweredSentAt = Math.max(this.lastAnsweredSentAt, sentAt);
    if (this.fencedNow && this.now() - this.lastAnsweredSentAt < this.fenceAfterMs) this.fencedNow = false;
  }

  /** Milliseconds since the last answered heartbeat was sent. */
  silentMs(): number {
    return this.now() - this.lastAnsweredSentAt;
  }

  /** Fences if the delay passed; answers whether the worker is fenced. */
  check(): boolean {
    if (this.fencedNow) return true;
    const silent = this.silentMs();
    if (silent < this.fenceAfterMs) return false;
    this.fencedNow = true;
    this.onFence(silent);
    return true;
  }

  start(): void {
    this.timer ??= setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
