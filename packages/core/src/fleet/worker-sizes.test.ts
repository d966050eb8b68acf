import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseWorkerGroupConfig } from "../workers/group-config.ts";
import { simulate } from "./simulator.ts";
import { jobMemoryLimitMb, workerComputeUnits, workerMemoryMb } from "./worker-sizes.ts";

describe("worker sizes (seed 004)", () => {
  it("names the seed's sizes and their compute units, and accepts MB", () => {
    assert.deepEqual(
      (["small", "standard", "large"] as const).map((size) => [
        workerMemoryMb(size),
        workerComputeUnits(size),
      ]),
      [
        [1024, 0.5],
        [2048, 1],
        [4096, 2],
      ],
    );
    // Above 2 GB is 2 CU whatever the memory ("capped at 2 CU regardless of actual memory").
    assert.equal(workerComputeUnits(8192), 2);
    assert.equal(workerComputeUnits(1536), 1);
    assert.equal(workerComputeUnits(512), 0.5);
  });

  it("gives a sized group's jobs its size unless they ask for less", () => {
    assert.equal(jobMemoryLimitMb(null, "small", 3000), 1024);
    assert.equal(jobMemoryLimitMb(512, "small", 3000), 512);
    assert.equal(jobMemoryLimitMb(4000, "small", 3000), 1024, "no more than the worker has");
    assert.equal(jobMemoryLimitMb(null, null, 3000), 3000);
    assert.equal(jobMemoryLimitMb(700, undefined, 3000), 700);
    assert.equal(jobMemoryLimitMb(null, null, null), null);
  });

  it("is what a group's config accepts, refused naming the field otherwise", () => {
    assert.equal(parseWorkerGroupConfig({ worker_size: "large" }).worker_size, "large");
    assert.equal(parseWorkerGroupConfig({ worker_size: 3072 }).worker_size, 3072);
    for (const bad of ["huge", 100, 2.5])
      assert.throws(() => parseWorkerGroupConfig({ worker_size: bad }), { field: "worker_size" });
  });

  it("sizes the simulator's compute units", () => {
    const input = {
      mode: "batch" as const,
      jobs: 100,
      duration: { kind: "fixed" as const, secs: 36 },
      workers: { kind: "fixed" as const, count: 10 },
      seed: 1,
    };
    // 100 jobs of 36 s on 10 workers: 360 s × 10 workers = 1 worker-hour.
    const standard = simulate(input).summary;
    assert.equal(standard.workerMemoryMb, 2048);
    assert.ok(Math.abs(standard.computeUnitHours - 1) < 1e-9, String(standard.computeUnitHours));
    const small = simulate({ ...input, workerSize: "small" }).summary;
    assert.equal(small.workerMemoryMb, 1024);
    assert.ok(Math.abs(small.computeUnitHours - 0.5) < 1e-9);
    assert.throws(() => simulate({ ...input, workerSize: 10 }), { field: "workerSize" });
  });
});
