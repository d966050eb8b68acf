// The sizing simulator (seed 004, "Scaling workers"): a deterministic discrete-event model of
// workers pulling jobs from one FIFO queue. It is pure (no database, no Node API) so the browser
// runs it as the operator types, and the same input and seed always give the same run.
//
// The model, as the seed describes workers: each worker runs one job at a time and takes the next
// waiting job the moment it finishes; a job waits from its arrival until a worker starts it. Events
// at the same instant are handled completions first, then arrivals, then the autoscaler, so a
// worker freed at t takes a job arriving at t without a wait.
import { invalidInput } from "../errors.ts";
import {
  drawDuration,
  exponential,
  meanDuration,
  seededRandom,
  type DurationDistribution,
} from "./random.ts";
import { TimeBuckets } from "./time-buckets.ts";
import {
  MAX_WORKER_SIZE_MB,
  MIN_WORKER_SIZE_MB,
  WORKER_SIZES,
  workerComputeUnits,
  workerMemoryMb,
  type WorkerSize,
} from "./worker-sizes.ts";

export type ArrivalMode = "batch" | "continuous" | "random";

/**
 * The autoscaling rule (a simplified form of the seed's starting values): every `checkEverySecs`,
 * unless the last scaling event is less than `cooldownSecs` old,
 * - scale out when jobs have been waiting without a break for `scaleOutAfterSecs`: add one worker
 *   per waiting job, up to `max`;
 * - otherwise scale in: remove the workers idle for `scaleInIdleSecs` or more, down to `min`.
 * New workers start at once (no boot time); the run starts with `min` workers.
 */
export interface AutoscalePolicy {
  kind: "autoscale";
  min: number;
  max: number;
  checkEverySecs: number;
  scaleOutAfterSecs: number;
  scaleInIdleSecs: number;
  cooldownSecs: number;
}

export type WorkerPolicy = { kind: "fixed"; count: number } | AutoscalePolicy;

/** The seed's values: checks every 30 s, 60–120 s cooldown, scale in after 5 min of low use. */
export const DEFAULT_AUTOSCALE = {
  checkEverySecs: 30,
  scaleOutAfterSecs: 30,
  scaleInIdleSecs: 300,
  cooldownSecs: 60,
} as const;

export interface SimulationInput {
  mode: ArrivalMode;
  /** batch: how many jobs arrive at t = 0. */
  jobs?: number;
  /** continuous, random: jobs per second (random: the mean of a Poisson process). */
  arrivalRate?: number;
  /** continuous, random: how long jobs keep arriving, in seconds. */
  arrivalSecs?: number;
  duration: DurationDistribution;
  workers: WorkerPolicy;
  /** The group's worker size (worker-sizes.ts, as its config's `worker_size`); default standard. */
  workerSize?: WorkerSize;
  seed: number;
}

export interface SimulationPoint {
  /** Start of the step, seconds from the first arrival. */
  t: number;
  /** Mean number of waiting jobs over the step. */
  queued: number;
  /** Mean wait of the jobs that started during the step; null when none started. */
  waitSecs: number | null;
  /** Busy worker-seconds over live worker-seconds during the step (0..1). */
  occupancy: number | null;
  /** Mean number of live workers over the step. */
  workers: number;
}

export interface SimulationSummary {
  jobs: number;
  /** When the last job completed: the seed's "elapsed time, from first job to last completion". */
  drainSecs: number;
  meanWaitSecs: number;
  p95WaitSecs: number;
  maxWaitSecs: number;
  /** Busy worker-seconds over live worker-seconds from t = 0 to the drain. */
  meanOccupancy: number;
  /** Jobs completed per second over the run. */
  throughput: number;
  peakWorkers: number;
  scalingEvents: number;
  /** Memory of one worker of the run's size, in MB. */
  workerMemoryMb: number;
  /** The seed's compute units, integrated over the live workers from t = 0 to the drain. */
  computeUnitHours: number;
}

export interface SimulationResult {
  stepSecs: number;
  points: SimulationPoint[];
  summary: SimulationSummary;
}

/** The browser runs this as one types: keep a run well under a second. */
export const MAX_SIMULATED_JOBS = 2_000_000;
export const MAX_SIMULATED_WORKERS = 10_000;
const MAX_POINTS = 240;

function positive(field: string, value: number | undefined, integer = false): number {
  if (value === undefined || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value)))
    throw invalidInput(field, integer ? "must be a positive whole number" : "must be a positive number");
  return value;
}

function validate(input: SimulationInput): void {
  if (input.mode === "batch") {
    if (positive("jobs", input.jobs, true) > MAX_SIMULATED_JOBS)
      throw invalidInput("jobs", `at most ${MAX_SIMULATED_JOBS.toLocaleString("en")}`);
  } else {
    const expected = positive("arrivalRate", input.arrivalRate) * positive("arrivalSecs", input.arrivalSecs);
    if (expected > MAX_SIMULATED_JOBS)
      throw invalidInput(
        "arrivalRate",
        `rate × time must stay under ${MAX_SIMULATED_JOBS.toLocaleString("en")} jobs`,
      );
  }
  const d = input.duration;
  if (d.kind === "fixed") positive("duration.secs", d.secs);
  else if (d.kind === "exponential") positive("duration.meanSecs", d.meanSecs);
  else if (!(d.minSecs >= 0 && d.maxSecs >= d.minSecs && d.maxSecs > 0))
    throw invalidInput("duration.maxSecs", "needs 0 ≤ min ≤ max and max > 0");
  const w = input.workers;
  if (w.kind === "fixed") {
    if (positive("workers.count", w.count, true) > MAX_SIMULATED_WORKERS)
      throw invalidInput("workers.count", `at most ${MAX_SIMULATED_WORKERS}`);
  } else {
    if (!Number.isInteger(w.min) || w.min < 1) throw invalidInput("workers.min", "must be 1 or more");
    if (!Number.isInteger(w.max) || w.max < w.min || w.max > MAX_SIMULATED_WORKERS)
      throw invalidInput("workers.max", `must be between min and ${MAX_SIMULATED_WORKERS}`);
    positive("workers.checkEverySecs", w.checkEverySecs);
    for (const field of ["scaleOutAfterSecs", "scaleInIdleSecs", "cooldownSecs"] as const)
      if (!(w[field] >= 0)) throw invalidInput(`workers.${field}`, "must be 0 or more");
  }
  const size = input.workerSize;
  if (
    size !== undefined &&
    !(typeof size === "string"
      ? Object.hasOwn(WORKER_SIZES, size)
      : Number.isInteger(size) && size >= MIN_WORKER_SIZE_MB && size <= MAX_WORKER_SIZE_MB)
  )
    throw invalidInput(
      "workerSize",
      `must be small, standard, large or MB from ${MIN_WORKER_SIZE_MB} to ${MAX_WORKER_SIZE_MB}`,
    );
  if (!Number.isInteger(input.seed)) throw invalidInput("seed", "must be a whole number");
}

/** Arrival times in order, drawn lazily (a million arrivals need no array). */
function arrivals(input: SimulationInput): () => number | null {
  if (input.mode === "batch") {
    let left = input.jobs!;
    return () => (left-- > 0 ? 0 : null);
  }
  const rate = input.arrivalRate!;
  const until = input.arrivalSecs!;
  if (input.mode === "continuous") {
    const count = Math.round(rate * until);
    let i = 0;
    return () => (i < count ? i++ / rate : null);
  }
  // A Poisson process: exponential gaps. Its own stream, so that changing the duration
  // distribution keeps the same arrivals.
  const random = seededRandom(input.seed);
  let t = 0;
  return () => {
    if (t >= until) return null;
    const at = t;
    t += exponential(random, 1 / rate);
    return at;
  };
}

/** A binary min-heap of completion times. */
class Completions {
  private readonly heap: number[] = [];
  get size(): number {
    return this.heap.length;
  }
  peek(): number {
    return this.heap[0] ?? Infinity;
  }
  push(value: number): void {
    const h = this.heap;
    h.push(value);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]! <= value) break;
      h[i] = h[parent]!;
      i = parent;
    }
    h[i] = value;
  }
  pop(): number {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= h.length) break;
        const right = left + 1;
        const child = right < h.length && h[right]! < h[left]! ? right : left;
        if (h[child]! >= last) break;
        h[i] = h[child]!;
        i = child;
      }
      h[i] = last;
    }
    return top;
  }
}

function expectedEnd(input: SimulationInput, meanSecs: number): number {
  const workers = input.workers.kind === "fixed" ? input.workers.count : input.workers.min;
  if (input.mode === "batch") return Math.max(meanSecs, (input.jobs! * meanSecs) / workers);
  return input.arrivalSecs! + meanSecs;
}

function run(input: SimulationInput, expectedEndSecs: number): SimulationResult {
  const nextArrival = arrivals(input);
  const durationRandom = seededRandom(input.seed ^ 0x5bd1e995);
  const buckets = new TimeBuckets(MAX_POINTS, expectedEndSecs);
  const policy = input.workers;
  const autoscale = policy.kind === "autoscale" ? policy : null;

  const queue: number[] = []; // arrival times of waiting jobs, FIFO from `head`
  let head = 0;
  // Idle workers' idle-since times. The most recently freed worker is reused first, so the ones
  // idle longest are those the autoscaler removes.
  const idle: number[] = [];
  const running = new Completions();
  let alive = policy.kind === "fixed" ? policy.count : policy.min;
  for (let i = 0; i < alive; i++) idle.push(0);

  const waits: number[] = [];
  let now = 0;
  let busySecs = 0;
  let aliveSecs = 0;
  let peakWorkers = alive;
  let scalingEvents = 0;
  let lastScaleAt = -Infinity;
  let waitingSince: number | null = null;
  let nextCheck = autoscale ? autoscale.checkEverySecs : Infinity;
  let arrival = nextArrival();

  const advance = (to: number) => {
    const waiting = queue.length - head;
    buckets.integrate(now, to, waiting, alive, running.size);
    busySecs += running.size * (to - now);
    aliveSecs += alive * (to - now);
    now = to;
  };
  const start = (arrivedAt: number) => {
    const wait = now - arrivedAt;
    waits.push(wait);
    buckets.addWait(now, wait);
    running.push(now + drawDuration(input.duration, durationRandom));
  };
  const startWaitingJobs = () => {
    while (idle.length > 0 && head < queue.length) {
      idle.pop();
      start(queue[head++]!);
    }
    if (head === queue.length) {
      queue.length = 0;
      head = 0;
      waitingSince = null;
    }
  };

  for (;;) {
    const completion = running.peek();
    const arrivalAt = arrival ?? Infinity;
    const workLeft = running.size > 0 || arrival !== null || head < queue.length;
    if (!workLeft) break;
    const at = Math.min(completion, arrivalAt, nextCheck);
    advance(at);
    if (completion === at) {
      running.pop();
      idle.push(now);
      startWaitingJobs();
    } else if (arrivalAt === at) {
      queue.push(now);
      waitingSince ??= now;
      arrival = nextArrival();
      startWaitingJobs();
    } else if (autoscale) {
      nextCheck += autoscale.checkEverySecs;
      if (now - lastScaleAt < autoscale.cooldownSecs) continue;
      const waiting = queue.length - head;
      if (waiting > 0 && waitingSince !== null && now - waitingSince >= autoscale.scaleOutAfterSecs) {
        const added = Math.min(autoscale.max - alive, waiting);
        if (added > 0) {
          alive += added;
          for (let i = 0; i < added; i++) idle.push(now);
          peakWorkers = Math.max(peakWorkers, alive);
          startWaitingJobs();
          // A job still waiting starts a new wait for the next scale-out.
          if (head < queue.length) waitingSince = now;
          scalingEvents++;
          lastScaleAt = now;
        }
      } else if (waiting === 0) {
        let removable = 0;
        while (removable < idle.length && now - idle[removable]! >= autoscale.scaleInIdleSecs) removable++;
        const removed = Math.min(removable, alive - autoscale.min);
        if (removed > 0) {
          idle.splice(0, removed);
          alive -= removed;
          scalingEvents++;
          lastScaleAt = now;
        }
      }
    }
  }

  const drainSecs = now;
  const sorted = Float64Array.from(waits).sort();
  const jobs = sorted.length;
  const points = buckets.totals(drainSecs).map((b) => ({
    t: b.start,
    queued: b.span > 0 ? b.queueSecs / b.span : 0,
    waitSecs: b.waitCount > 0 ? b.waitSum / b.waitCount : null,
    occupancy: b.aliveSecs > 0 ? b.busySecs / b.aliveSecs : null,
    workers: b.span > 0 ? b.aliveSecs / b.span : alive,
  }));
  return {
    stepSecs: buckets.width,
    points,
    summary: {
      jobs,
      drainSecs,
      meanWaitSecs: jobs > 0 ? sorted.reduce((sum, w) => sum + w, 0) / jobs : 0,
      // Nearest rank: the smallest wait that at least 95 % of jobs did not exceed.
      p95WaitSecs: jobs > 0 ? sorted[Math.ceil(0.95 * jobs) - 1]! : 0,
      maxWaitSecs: jobs > 0 ? sorted[jobs - 1]! : 0,
      meanOccupancy: aliveSecs > 0 ? busySecs / aliveSecs : 0,
      throughput: drainSecs > 0 ? jobs / drainSecs : 0,
      peakWorkers,
      scalingEvents,
      workerMemoryMb: workerMemoryMb(input.workerSize ?? "standard"),
      computeUnitHours: (aliveSecs * workerComputeUnits(input.workerSize ?? "standard")) / 3600,
    },
  };
}

/** Runs the model once; throws INVALID_INPUT naming the field at fault. */
export function simulate(input: SimulationInput): SimulationResult {
  validate(input);
  const first = run(input, expectedEnd(input, meanDuration(input.duration)));
  // The guess of the run's length only sets the step; when it was far too long (autoscaling
  // drained faster than `min` workers would), run again at the right step: same events, finer
  // series.
  if (first.points.length >= MAX_POINTS / 4 || first.summary.drainSecs === 0) return first;
  return run(input, first.summary.drainSecs);
}
