import assert from "node:assert/strict";
import { it } from "node:test";
import { onSampleTick, SAMPLE_TICK_MS } from "./sample-tick.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("one timer samples every watched job at the same tick, and stops with the last watch", async () => {
  const a: number[] = [];
  const b: number[] = [];
  const stopA = onSampleTick((now) => a.push(now));
  const stopB = onSampleTick((now) => b.push(now));
  await sleep(SAMPLE_TICK_MS * 3.5);
  assert.ok(a.length >= 2, `ticks: ${a.length}`);
  // The same wake-ups: each tick calls both.
  assert.deepEqual(b, a);
  stopA();
  const seenA = a.length;
  await sleep(SAMPLE_TICK_MS * 2.5);
  assert.equal(a.length, seenA, "a stopped watch is not called again");
  assert.ok(b.length > seenA, "the other watch goes on");
  stopB();
  const seenB = b.length;
  await sleep(SAMPLE_TICK_MS * 2.5);
  assert.equal(b.length, seenB);
});

it("a watch that stops itself or another during a tick is not called after", async () => {
  const calls: string[] = [];
  let stopSecond = (): void => {};
  const stopFirst = onSampleTick(() => {
    calls.push("first");
    stopFirst();
    stopSecond();
  });
  stopSecond = onSampleTick(() => calls.push("second"));
  await sleep(SAMPLE_TICK_MS * 3.5);
  assert.deepEqual(calls, ["first"]);
});
