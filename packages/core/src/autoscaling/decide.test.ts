import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "../errors.ts";
import { parseWorkerGroupConfig } from "../workers/group-config.ts";
import { decideScaling, SCALE_IN_AFTER_SECS, type GroupLoad } from "./decide.ts";

const load = (patch: Partial<GroupLoad>): GroupLoad => ({
  minWorkers: 0,
  maxWorkers: 3,
  cooldownSecs: 60,
  current: 2,
  waiting: 0,
  alive: 2,
  busy: 1,
  occupancy15s: 0.5,
  occupancy5m: 0.5,
  occupancy30m: 0.5,
  secsSinceChange: 600,
  ...patch,
});

describe("decideScaling", () => {
  it("wakes a group from zero when a job arrives, even within the cooldown", () => {
    const decision = decideScaling(
      load({ current: 0, alive: 0, busy: 0, waiting: 30, occupancy15s: null, secsSinceChange: 1 }),
    );
    assert.equal(decision?.to, 3, "as many as wait, up to max_workers");
    assert.equal(decision?.eventType, "scale_out");
    assert.match(decision!.reason, /30 job\(s\) waiting and no worker/);
    assert.equal(decideScaling(load({ current: 0, alive: 0, busy: 0, waiting: 1, minWorkers: 0 }))?.to, 1);
  });

  it("scales out when more jobs wait than workers are idle, by the difference, up to max", () => {
    assert.deepEqual(decideScaling(load({ maxWorkers: 10, current: 2, busy: 2, waiting: 3 })), {
      from: 2,
      to: 5,
      eventType: "scale_out",
      reason: "3 job(s) waiting for 0 idle worker(s); occupancy 50 % (15 s), 50 % (5 min), 50 % (30 min)",
    });
    assert.equal(decideScaling(load({ current: 2, busy: 2, waiting: 50 }))?.to, 3);
    // As many idle (or starting) workers as jobs waiting: they will take them.
    assert.equal(decideScaling(load({ current: 3, busy: 1, waiting: 2, maxWorkers: 5 })), null);
    assert.equal(decideScaling(load({ current: 3, busy: 3, waiting: 9 })), null, "already at max_workers");
  });

  it("scales out by one at 75 % occupancy or more", () => {
    assert.equal(decideScaling(load({ occupancy15s: 0.75 }))?.to, 3);
    assert.equal(decideScaling(load({ occupancy15s: 0.74 })), null);
  });

  it("respects the cooldown except to wake from zero or to get back inside the bounds", () => {
    assert.equal(decideScaling(load({ busy: 2, waiting: 5, secsSinceChange: 59 })), null);
    assert.equal(decideScaling(load({ busy: 2, waiting: 5, secsSinceChange: 60 }))?.to, 3);
    const bounds = decideScaling(load({ current: 5, secsSinceChange: 1 }));
    assert.deepEqual([bounds?.to, bounds?.eventType], [3, "bounds"]);
    assert.equal(decideScaling(load({ current: 0, minWorkers: 2, secsSinceChange: 1 }))?.to, 2);
  });

  it("goes to min_workers (zero) once idle and quiet after the cooldown", () => {
    const idle = load({ busy: 0, occupancy15s: 0.1, secsSinceChange: 60 });
    assert.deepEqual([decideScaling(idle)?.to, decideScaling(idle)?.eventType], [0, "scale_in"]);
    assert.equal(decideScaling({ ...idle, minWorkers: 1 })?.to, 1);
    assert.equal(decideScaling({ ...idle, occupancy15s: 0.3 }), null, "busy within the last 15 s");
    assert.equal(decideScaling({ ...idle, busy: 1 }), null, "a job still runs");
    assert.equal(decideScaling({ ...idle, secsSinceChange: 10 }), null, "within the cooldown");
  });

  it("scales in below 25 % only after 5 minutes, by one, or by half when the 30 min window agrees", () => {
    const low = { current: 6, maxWorkers: 10, busy: 1, waiting: 0, occupancy15s: 0.2, occupancy5m: 0.2 };
    assert.equal(decideScaling(load({ ...low, secsSinceChange: SCALE_IN_AFTER_SECS - 1 })), null);
    assert.equal(decideScaling(load({ ...low, occupancy30m: 0.5 }))?.to, 5);
    assert.equal(decideScaling(load({ ...low, occupancy30m: 0.1 }))?.to, 3);
    assert.equal(decideScaling(load({ ...low, occupancy5m: 0.3 })), null, "the 5 min window is not low");
    assert.equal(decideScaling(load({ ...low, minWorkers: 6 })), null, "already at min_workers");
  });
});

describe("decideScaling with Windmill's advanced settings", () => {
  it("inc_scale_occupancy_rate / dec_scale_occupancy_rate move the thresholds; inc_num_workers the step", () => {
    assert.equal(decideScaling(load({ occupancy15s: 0.75, scaleOutOccupancy: 0.9 })), null);
    const out = decideScaling(load({ maxWorkers: 10, occupancy15s: 0.9, scaleOutOccupancy: 0.9, step: 3 }));
    assert.equal(out?.to, 5);
    assert.match(out!.reason, /at or above 90 %/);
    assert.equal(decideScaling(load({ occupancy15s: 0.95, step: 5 }))?.to, 3, "never beyond max_workers");
    const low = { current: 6, maxWorkers: 10, busy: 1, waiting: 0, occupancy15s: 0.35, occupancy5m: 0.35 };
    assert.equal(decideScaling(load(low)), null, "above the default 25 %");
    const shrink = decideScaling(load({ ...low, scaleInOccupancy: 0.4, step: 2 }));
    assert.equal(shrink?.to, 4);
    assert.match(shrink!.reason, /below 40 % for 5 min/);
  });

  it("inc_scale_num_jobs_waiting: only that many jobs beyond the idle workers add workers", () => {
    const waiting = load({ maxWorkers: 10, current: 2, busy: 2, waiting: 3, occupancy15s: 0.5 });
    assert.equal(decideScaling({ ...waiting, incJobsWaiting: 4 }), null);
    assert.equal(decideScaling({ ...waiting, incJobsWaiting: 3 })?.to, 5);
  });

  it("full_scale_jobs_waiting: straight to max_workers, with full_scale_cooldown_seconds as its cooldown", () => {
    const burst = load({ maxWorkers: 20, current: 2, busy: 2, waiting: 50, secsSinceChange: 10 });
    assert.equal(decideScaling(burst), null, "within the 60 s cooldown, no full scale out configured");
    const full = decideScaling({ ...burst, fullScaleJobsWaiting: 50 });
    assert.deepEqual([full?.to, full?.eventType], [20, "scale_out"]);
    assert.match(full!.reason, /full scale out/);
    assert.equal(decideScaling({ ...burst, fullScaleJobsWaiting: 51 }), null);
    assert.equal(decideScaling({ ...burst, fullScaleJobsWaiting: 50, fullScaleCooldownSecs: 30 }), null);
    assert.equal(decideScaling({ ...burst, fullScaleJobsWaiting: 50, fullScaleCooldownSecs: 10 })?.to, 20);
  });
});

describe("the autoscaling config", () => {
  const config = (autoscaling: unknown) => () => parseWorkerGroupConfig({ autoscaling });
  const refused = (autoscaling: unknown, field: string, message: RegExp) =>
    assert.throws(config(autoscaling), (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(error.code, "INVALID_INPUT");
      assert.match(error.message, new RegExp(`^${field.replace(/[.[\]]/g, "\\$&")}: `));
      assert.match(error.message, message);
      return true;
    });
  const local = { type: "local" };

  it("accepts each integration", () => {
    const base = { enabled: true, min_workers: 0, max_workers: 3, cooldown_seconds: 5 };
    assert.deepEqual(parseWorkerGroupConfig({ autoscaling: { ...base, integration: local } }), {
      autoscaling: { ...base, integration: local },
    });
    config({ ...base, integration: { type: "script", command: ["/usr/local/bin/scale", "--dry"] } })();
    config({ ...base, integration: { type: "script", path: "f/ops/scale", tag: "ops" } })();
    config({
      ...base,
      integration: { type: "kubernetes", deployment: "millrace-worker-gpu", namespace: "ops" },
    })();
  });

  it("accepts Windmill's advanced keys and keeps them as given (round trip)", () => {
    const windmill = {
      enabled: true,
      min_workers: 1,
      max_workers: 10,
      cooldown_seconds: 120,
      inc_scale_num_jobs_waiting: 2,
      full_scale_cooldown_seconds: 300,
      full_scale_jobs_waiting: 40,
      dec_scale_occupancy_rate: 20,
      inc_scale_occupancy_rate: 80,
      inc_num_workers: 2,
      custom_tags: ["gpu", "heavy_py"],
      integration: { type: "script", path: "f/ops/scale", tag: "ops" },
    };
    const parsed = parseWorkerGroupConfig({ autoscaling: windmill });
    assert.deepEqual(parsed, { autoscaling: windmill });
    assert.deepEqual(parseWorkerGroupConfig(JSON.parse(JSON.stringify(parsed))), parsed);
  });

  it("refuses an inconsistent config, naming the field", () => {
    const base = { enabled: true, min_workers: 0, max_workers: 3, integration: local };
    refused({ ...base, min_workers: 4 }, "autoscaling.min_workers", /must not exceed max_workers \(4 > 3\)/);
    refused({ ...base, max_workers: 0 }, "autoscaling.max_workers", /at least 1/);
    refused({ ...base, min_workers: -1 }, "autoscaling.min_workers", /0 or more/);
    refused({ ...base, cooldown_seconds: 1.5 }, "autoscaling.cooldown_seconds", /whole number/);
    refused(
      { ...base, integration: { type: "ecs" } },
      "autoscaling.integration.type",
      /"local", "script" or "kubernetes"/,
    );
    refused(
      { ...base, integration: { type: "script" } },
      "autoscaling.integration.command",
      /either command/,
    );
    refused(
      { ...base, integration: { type: "kubernetes", namespace: "Bad_NS" } },
      "autoscaling.integration.namespace",
      /not a Kubernetes namespace/,
    );
    refused({ ...base, burst: true }, "autoscaling.burst", /not an autoscaling setting/);
    refused(
      { ...base, inc_scale_occupancy_rate: 120 },
      "autoscaling.inc_scale_occupancy_rate",
      /at most 100/,
    );
    refused({ ...base, dec_scale_occupancy_rate: -1 }, "autoscaling.dec_scale_occupancy_rate", /0 or more/);
    refused(
      { ...base, dec_scale_occupancy_rate: 80 },
      "autoscaling.dec_scale_occupancy_rate",
      /must be below inc_scale_occupancy_rate \(80 >= 75\)/,
    );
    refused(
      { ...base, inc_scale_occupancy_rate: 20 },
      "autoscaling.inc_scale_occupancy_rate",
      /must be below inc_scale_occupancy_rate \(25 >= 20\)/,
    );
    refused(
      { ...base, inc_scale_num_jobs_waiting: 0 },
      "autoscaling.inc_scale_num_jobs_waiting",
      /at least 1/,
    );
    refused(
      { ...base, full_scale_jobs_waiting: "10" },
      "autoscaling.full_scale_jobs_waiting",
      /number of jobs/,
    );
    refused({ ...base, inc_num_workers: 0 }, "autoscaling.inc_num_workers", /at least 1/);
    refused({ ...base, custom_tags: "gpu" }, "autoscaling.custom_tags", /list of tags/);
    refused({ ...base, custom_tags: ["a b"] }, "autoscaling.custom_tags[0]", /not a tag/);
    // A key of neither Millrace nor Windmill: refused, the supported ones listed.
    refused(
      { ...base, num_jobs_waiting: 3 },
      "autoscaling.num_jobs_waiting",
      /supported: .*inc_scale_num_jobs_waiting/,
    );
    refused({ min_workers: 0, max_workers: 3, integration: local }, "autoscaling.enabled", /true or false/);
  });
});
