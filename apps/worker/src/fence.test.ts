import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_ZOMBIE_JOB_TIMEOUT_SECS, Fence } from "./fence.ts";

function clocked(timeoutSecs?: number) {
  let now = 1000;
  const fences: number[] = [];
  const fence = new Fence({
    ...(timeoutSecs ? { timeoutSecs } : {}),
    now: () => now,
    onFence: (silentMs) => fences.push(silentMs),
  });
  return { fence, fences, advance: (ms: number) => (now += ms) };
}

describe("self-fencing (the timer shared by database and agent workers)", () => {
  it("fences at half of the zombie timeout after the sending of the last answered ping, once", () => {
    const { fence, fences, advance } = clocked();
    assert.equal(fence.fenceAfterMs, (DEFAULT_ZOMBIE_JOB_TIMEOUT_SECS * 1000) / 2);
    advance(10_000);
    const answered = fence.sending();
    // A slow answer: the deadline counts from when the ping was sent, not from its answer.
    advance(20_000);
    answered();
    advance(9_999);
    assert.equal(fence.check(), false);
    advance(1);
    assert.equal(fence.check(), true);
    assert.equal(fence.check(), true);
    assert.deepEqual(fences, [30_000]);
  });

  it("a ping that fails counts for nothing; an answered one keeps it unfenced", () => {
    const { fence, fences, advance } = clocked(6);
    for (let i = 0; i < 10; i++) {
      fence.sending()(); // answered
      advance(1000);
      assert.equal(fence.check(), false);
    }
    fence.sending(); // never answered (the database is cut off)
    advance(1999); // 1 s since the last answered ping was sent, plus this
    assert.equal(fence.check(), false);
    advance(1);
    assert.equal(fence.check(), true);
    assert.equal(fences.length, 1);
  });

  it("an answer to a ping sent before the deadline does not unfence; a fresh one does", () => {
    const { fence, advance } = clocked(6);
    const old = fence.sending();
    advance(3500);
    assert.equal(fence.check(), true);
    const fresh = fence.sending();
    advance(10);
    old();
    assert.equal(fence.fenced, true, "sent 3.5 s ago: still past the delay");
    fresh();
    assert.equal(fence.fenced, false);
  });

  it("follows the published timeout; pings at least 4 times per fence delay", () => {
    const { fence, advance } = clocked();
    assert.equal(fence.pingIntervalMs(5000), 5000);
    fence.setTimeoutSecs(6);
    assert.equal(fence.fenceAfterMs, 3000);
    assert.equal(fence.pingIntervalMs(5000), 750);
    advance(3000);
    assert.equal(fence.check(), true);
  });
});
