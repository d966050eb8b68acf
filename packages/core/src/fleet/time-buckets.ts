// The simulator's time series: piecewise-constant quantities (queue length, live and busy workers)
// integrated exactly into at most `maxBuckets` equal buckets, plus per-bucket sums of job waits.
// The run's length is not known in advance, so when time outgrows the buckets, neighbours merge
// and the width doubles: memory stays bounded whatever the number of jobs. Widths are powers of
// two so that bucket boundaries are exact in floating point (no drift, no endless loop on a
// boundary that rounds the wrong way).

export interface BucketTotals {
  /** Start of the bucket, seconds from t = 0. */
  start: number;
  /** Seconds of the bucket the run covered (the last one may be partial). */
  span: number;
  queueSecs: number;
  aliveSecs: number;
  busySecs: number;
  waitSum: number;
  waitCount: number;
}

const FIELDS = 5;
const [QUEUE, ALIVE, BUSY, WAIT_SUM, WAIT_COUNT] = [0, 1, 2, 3, 4] as const;

/** The smallest power of two at least `secs` (and at least 2^-20 s). */
export function powerOfTwoAtLeast(secs: number): number {
  return 2 ** Math.max(-20, Math.ceil(Math.log2(Math.max(secs, 2 ** -20))));
}

export class TimeBuckets {
  width: number;
  readonly maxBuckets: number;
  private readonly sums: Float64Array;

  /** `maxBuckets` must be even (pairs merge). */
  constructor(maxBuckets: number, expectedEndSecs: number) {
    this.maxBuckets = maxBuckets;
    this.width = powerOfTwoAtLeast(expectedEndSecs / maxBuckets);
    this.sums = new Float64Array(maxBuckets * FIELDS);
  }

  /** Adds queue × dt, alive × dt and busy × dt over [from, to). */
  integrate(from: number, to: number, queue: number, alive: number, busy: number): void {
    let t = from;
    while (t < to) {
      const i = this.indexOf(t);
      const end = Math.min(to, (i + 1) * this.width);
      const dt = end - t;
      this.sums[i * FIELDS + QUEUE]! += queue * dt;
      this.sums[i * FIELDS + ALIVE]! += alive * dt;
      this.sums[i * FIELDS + BUSY]! += busy * dt;
      t = end;
    }
  }

  /** Records the wait of a job that started at `at`. */
  addWait(at: number, wait: number): void {
    const i = this.indexOf(at);
    this.sums[i * FIELDS + WAIT_SUM]! += wait;
    this.sums[i * FIELDS + WAIT_COUNT]! += 1;
  }

  /** The buckets up to `endSecs`. */
  totals(endSecs: number): BucketTotals[] {
    const count = Math.min(this.maxBuckets, Math.max(1, Math.ceil(endSecs / this.width)));
    const out: BucketTotals[] = [];
    for (let i = 0; i < count; i++) {
      const start = i * this.width;
      out.push({
        start,
        span: Math.max(0, Math.min(this.width, endSecs - start)),
        queueSecs: this.sums[i * FIELDS + QUEUE]!,
        aliveSecs: this.sums[i * FIELDS + ALIVE]!,
        busySecs: this.sums[i * FIELDS + BUSY]!,
        waitSum: this.sums[i * FIELDS + WAIT_SUM]!,
        waitCount: this.sums[i * FIELDS + WAIT_COUNT]!,
      });
    }
    return out;
  }

  private indexOf(t: number): number {
    while (t >= this.width * this.maxBuckets) this.mergePairs();
    return Math.floor(t / this.width);
  }

  private mergePairs(): void {
    const half = this.maxBuckets / 2;
    for (let i = 0; i < half; i++) {
      for (let f = 0; f < FIELDS; f++) {
        this.sums[i * FIELDS + f] = this.sums[2 * i * FIELDS + f]! + this.sums[(2 * i + 1) * FIELDS + f]!;
      }
    }
    this.sums.fill(0, half * FIELDS);
    this.width *= 2;
  }
}
