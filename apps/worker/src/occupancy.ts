const WINDOW_SECONDS = 30 * 60;

/**
 * Busy time of one worker slot, in one-second buckets over the last 30 minutes: enough to report
 * occupancy over 15 s, 5 min and 30 min without keeping a record per job (a slot can run
 * thousands of short jobs a minute).
 */
export class Occupancy {
  private readonly busyMs = new Float64Array(WINDOW_SECONDS);
  private readonly stamp = new Float64Array(WINDOW_SECONDS);
  private busySince: number | null = null;
  private readonly startedAt = Date.now();

  start(now = Date.now()): void {
    this.busySince = now;
  }

  end(now = Date.now()): void {
    if (this.busySince === null) return;
    this.add(this.busySince, now);
    this.busySince = null;
  }

  private add(from: number, to: number): void {
    for (let t = from; t < to;) {
      const second = Math.floor(t / 1000);
      const next = Math.min(to, (second + 1) * 1000);
      const index = second % WINDOW_SECONDS;
      if (this.stamp[index] !== second) {
        this.stamp[index] = second;
        this.busyMs[index] = 0;
      }
      this.busyMs[index]! += next - t;
      t = next;
    }
  }

  /** Share of the last `seconds` (0..1) this slot spent running jobs, the current job included. */
  rate(seconds: number, now = Date.now()): number {
    const span = Math.min(seconds * 1000, now - this.startedAt);
    if (span <= 0) return 0;
    const nowSecond = Math.floor(now / 1000);
    let busy = 0;
    for (let s = nowSecond - seconds + 1; s <= nowSecond; s++) {
      const index = ((s % WINDOW_SECONDS) + WINDOW_SECONDS) % WINDOW_SECONDS;
      if (this.stamp[index] === s) busy += this.busyMs[index]!;
    }
    if (this.busySince !== null) busy += now - Math.max(this.busySince, now - seconds * 1000);
    return Math.min(1, busy / span);
  }
}
