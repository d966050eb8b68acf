import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultJobMemoryMb, jobMemoryDefault, MIN_DEFAULT_JOB_MEMORY_MB } from "./job-memory.ts";

const GiB = 1024 ** 3;

describe("the memory limit of jobs that set none", () => {
  it("is each slot's share of three quarters of the memory", () => {
    assert.equal(defaultJobMemoryMb(8, 24 * GiB), 2304);
    assert.equal(defaultJobMemoryMb(1, 4 * GiB), 3072);
    assert.equal(defaultJobMemoryMb(4, 2 * GiB), 384);
  });
  it("never goes below the floor", () => {
    assert.equal(defaultJobMemoryMb(64, 2 * GiB), MIN_DEFAULT_JOB_MEMORY_MB);
  });
  it("is JOB_MEMORY_LIMIT_MB when set, none for 0", () => {
    assert.equal(jobMemoryDefault(512, 8), 512);
    assert.equal(jobMemoryDefault(0, 8), null);
    assert.ok((jobMemoryDefault(undefined, 8) ?? 0) >= MIN_DEFAULT_JOB_MEMORY_MB);
  });
});
