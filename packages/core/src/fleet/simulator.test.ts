import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "../errors.ts";
import { DEFAULT_AUTOSCALE, simulate, type SimulationInput } from "./simulator.ts";
import { recommendWorkers } from "./sizing.ts";

/** Erlang C: the probability that a job waits in an M/M/c queue with offered load a = λ/μ. */
function erlangC(c: number, a: number): number {
  let term = 1;
  let sum = 0;
  for (let k = 0; k < c; k++) {
    sum += term;
    term *= a / (k + 1);
  }
  const last = term * (c / (c - a));
  return last / (sum + last);
}

/** The M/M/c mean wait in queue: C(c, a) / (cμ − λ). */
function mmcMeanWait(c: number, lambda: number, mu: number): number {
  return erlangC(c, lambda / mu) / (c * mu - lambda);
}

const relativeError = (actual: number, expected: number) => Math.abs(actual - expected) / expected;

describe("simulate", () => {
  it("drains a batch of 100 jobs × 1 s on 10 workers in 10 s at 100 % occupancy", () => {
    const { summary, points } = simulate({
      mode: "batch",
      jobs: 100,
      duration: { kind: "fixed", secs: 1 },
      workers: { kind: "fixed", count: 10 },
      seed: 1,
    });
    assert.equal(summary.jobs, 100);
    assert.equal(summary.drainSecs, 10);
    assert.equal(summary.meanOccupancy, 1);
    assert.equal(summary.throughput, 10);
    // Ten rounds of ten jobs: waits 0, 1, …, 9 s.
    assert.equal(summary.meanWaitSecs, 4.5);
    assert.equal(summary.p95WaitSecs, 9);
    assert.ok(points.length > 100 && points.length <= 240, `${points.length} points`);
    assert.ok(points.every((p) => p.occupancy === 1));
    assert.equal(points[0]!.queued, 90);
    assert.equal(points.at(-1)!.queued, 0);
  });

  it("matches Erlang C's mean wait for an M/M/10 queue at 80 % load", () => {
    const lambda = 8;
    const c = 10;
    const { summary } = simulate({
      mode: "random",
      arrivalRate: lambda,
      arrivalSecs: 125_000,
      duration: { kind: "exponential", meanSecs: 1 },
      workers: { kind: "fixed", count: c },
      seed: 42,
    });
    const expected = mmcMeanWait(c, lambda, 1);
    assert.ok(summary.jobs > 990_000, `${summary.jobs} jobs`);
    const error = relativeError(summary.meanWaitSecs, expected);
    assert.ok(error < 0.03, `mean wait ${summary.meanWaitSecs} vs Erlang C ${expected} (${error})`);
    assert.ok(relativeError(summary.meanOccupancy, lambda / c) < 0.01, `${summary.meanOccupancy}`);
  });

  it("gives an M/M/1 queue its utilisation λ/μ and mean wait ρ/(μ − λ)", () => {
    const { summary } = simulate({
      mode: "random",
      arrivalRate: 0.5,
      arrivalSecs: 1_000_000,
      duration: { kind: "exponential", meanSecs: 1 },
      workers: { kind: "fixed", count: 1 },
      seed: 7,
    });
    assert.ok(relativeError(summary.meanOccupancy, 0.5) < 0.01, `utilisation ${summary.meanOccupancy}`);
    assert.ok(relativeError(summary.meanWaitSecs, 1) < 0.03, `mean wait ${summary.meanWaitSecs}`);
  });

  it("is deterministic for a seed and differs across seeds", () => {
    const input: SimulationInput = {
      mode: "random",
      arrivalRate: 3,
      arrivalSecs: 600,
      duration: { kind: "uniform", minSecs: 0.5, maxSecs: 1.5 },
      workers: { kind: "fixed", count: 3 },
      seed: 99,
    };
    assert.deepEqual(simulate(input), simulate(input));
    assert.notDeepEqual(simulate(input).summary, simulate({ ...input, seed: 100 }).summary);
  });

  it("keeps constant arrivals at rate × duration workers without a wait", () => {
    const { summary } = simulate({
      mode: "continuous",
      arrivalRate: 2,
      arrivalSecs: 60,
      duration: { kind: "fixed", secs: 1 },
      workers: { kind: "fixed", count: 2 },
      seed: 1,
    });
    assert.equal(summary.jobs, 120);
    assert.equal(summary.maxWaitSecs, 0);
    assert.equal(summary.drainSecs, 60.5);
  });

  it("scales out while jobs wait and back in when workers idle", () => {
    const { summary, points } = simulate({
      mode: "batch",
      jobs: 100,
      duration: { kind: "fixed", secs: 1 },
      workers: {
        kind: "autoscale",
        min: 1,
        max: 10,
        checkEverySecs: 1,
        scaleOutAfterSecs: 1,
        scaleInIdleSecs: 0,
        cooldownSecs: 0,
      },
      seed: 1,
    });
    assert.equal(summary.peakWorkers, 10);
    // One worker for the first second, ten from t = 1 for the other 99 jobs.
    assert.equal(summary.drainSecs, 11);
    assert.equal(points[0]!.workers, 1);
    // At t = 10 the last nine jobs start and the idle tenth worker is removed.
    assert.equal(points.at(-1)!.workers, 9);

    const quiet = simulate({
      mode: "continuous",
      arrivalRate: 0.1,
      arrivalSecs: 3600,
      duration: { kind: "fixed", secs: 1 },
      workers: { kind: "autoscale", min: 1, max: 5, ...DEFAULT_AUTOSCALE },
      seed: 1,
    });
    assert.equal(quiet.summary.peakWorkers, 1, "no job waits, so nothing scales out");
  });

  it("bounds the series however many jobs run", () => {
    const { points } = simulate({
      mode: "batch",
      jobs: 1_000_000,
      duration: { kind: "fixed", secs: 0.1 },
      workers: { kind: "fixed", count: 7 },
      seed: 1,
    });
    assert.ok(points.length <= 240 && points.length >= 60, `${points.length} points`);
  });

  it("refuses impossible input, naming the field", () => {
    assert.throws(
      () =>
        simulate({
          mode: "batch",
          jobs: 0,
          duration: { kind: "fixed", secs: 1 },
          workers: { kind: "fixed", count: 1 },
          seed: 1,
        }),
      (error: unknown) => error instanceof AppError && error.field === "jobs",
    );
    assert.throws(
      () =>
        simulate({
          mode: "random",
          arrivalRate: 1e6,
          arrivalSecs: 3600,
          duration: { kind: "fixed", secs: 1 },
          workers: { kind: "fixed", count: 1 },
          seed: 1,
        }),
      (error: unknown) => error instanceof AppError && error.field === "arrivalRate",
    );
  });
});

describe("recommendWorkers", () => {
  it("follows seed 004's examples", () => {
    // "jobs arrive at 10/second and each takes 2 seconds: 10 × 2 = 20 workers"
    assert.equal(recommendWorkers({ baseRatePerSec: 10, peakRatePerSec: 10, meanDurationSecs: 2 }).min, 20);
    // Scenario 3: normal 2 jobs/s, peaks 8 jobs/s, 1 s each: min 2, max 8 × 1.5 = 12.
    assert.deepEqual(recommendWorkers({ baseRatePerSec: 2, peakRatePerSec: 8, meanDurationSecs: 1 }), {
      baseWorkers: 2,
      peakWorkersWithHeadroom: 12,
      min: 2,
      max: 12,
    });
    // Scenario 2: 100/min × 5 s = 8.3 workers: 9, rounded up.
    const webhooks = recommendWorkers({
      baseRatePerSec: 100 / 60,
      peakRatePerSec: 100 / 60,
      meanDurationSecs: 5,
    });
    assert.equal(webhooks.min, 9);
    assert.equal(webhooks.max, 13);
  });
});
