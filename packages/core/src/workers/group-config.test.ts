import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_TAGS } from "@millrace/runtime";
import { AppError } from "../errors.ts";
import { effectiveWorkerTags, parseWorkerGroupConfig } from "./group-config.ts";

describe("effectiveWorkerTags", () => {
  it("prefers WORKER_TAGS, then the group's worker_tags, then the default tags", () => {
    const group = { worker_tags: ["gpu", "bash"] };
    assert.deepEqual(effectiveWorkerTags(["python3"], group), ["python3"]);
    assert.deepEqual(effectiveWorkerTags(undefined, group), ["gpu", "bash"]);
    assert.deepEqual(effectiveWorkerTags(undefined, { init_bash: "echo hi" }), [...DEFAULT_TAGS]);
    assert.deepEqual(effectiveWorkerTags(undefined, null), [...DEFAULT_TAGS]);
  });

  it("treats an empty WORKER_TAGS list as unset", () => {
    assert.deepEqual(effectiveWorkerTags([], { worker_tags: ["gpu"] }), ["gpu"]);
    assert.deepEqual(effectiveWorkerTags([], null), [...DEFAULT_TAGS]);
  });

  it("returns a copy the caller may change", () => {
    const config = { worker_tags: ["gpu"] };
    effectiveWorkerTags(undefined, config).push("x");
    assert.deepEqual(config.worker_tags, ["gpu"]);
    const tags = effectiveWorkerTags(undefined, null);
    tags.push("x");
    assert.ok(!DEFAULT_TAGS.includes("x"));
  });
});

describe("parseWorkerGroupConfig", () => {
  it("accepts Windmill's fields and Millrace's network switch", () => {
    const config = {
      worker_tags: ["gpu", "python3"],
      init_bash: "apt-get install -y cuda",
      periodic_script_bash: "df -h",
      periodic_script_interval_seconds: 600,
      dedicated_worker: "acme:f/ops/hot_path",
      network: false,
    };
    assert.deepEqual(parseWorkerGroupConfig(config), config);
    assert.deepEqual(parseWorkerGroupConfig({}), {});
  });

  const invalid: [unknown, string, RegExp][] = [
    [{ worker_tags: ["gpu", "ok", "bad tag"] }, "worker_tags[2]", /letters, digits/],
    [{ worker_tags: ["gpu", "gpu"] }, "worker_tags[1]", /"gpu" is listed twice/],
    [{ worker_tags: [] }, "worker_tags", /at least one tag/],
    [{ worker_tags: "gpu" }, "worker_tags", /must be a list/],
    [{ worker_tags: ["$workspace"] }, "worker_tags[0]", /letters, digits/],
    [{ init_bash: 3 }, "init_bash", /must be a string/],
    [{ network: "no" }, "network", /true or false/],
    [
      { periodic_script_bash: "df" },
      "periodic_script_interval_seconds",
      /required when periodic_script_bash/,
    ],
    [{ periodic_script_interval_seconds: 1.5 }, "periodic_script_interval_seconds", /whole number/],
    [{ periodic_script_interval_seconds: 2 }, "periodic_script_interval_seconds", /at least 10/],
    [{ dedicated_worker: "f/ops/x" }, "dedicated_worker", /<workspace>:<script path>/],
    [{ dedicated_worker: "Acme:f/ops/x" }, "dedicated_worker", /"Acme" is not a workspace id/],
    [{ dedicated_worker: "acme:scripts/x" }, "dedicated_worker", /script path must look like/],
    [{ priority_tags: {} }, "priority_tags", /not a worker group setting Millrace supports/],
    // Supported since issue 37; decide.test.ts checks its fields.
    [{ autoscaling: {} }, "autoscaling.enabled", /must be true or false/],
    [["gpu"], "config", /JSON object/],
    [null, "config", /JSON object/],
  ];
  for (const [value, field, pattern] of invalid) {
    it(`refuses ${JSON.stringify(value)} naming ${field}`, () => {
      assert.throws(
        () => parseWorkerGroupConfig(value),
        (error: unknown) => {
          assert.ok(error instanceof AppError, String(error));
          assert.equal(error.code, "INVALID_INPUT");
          assert.equal(error.field, field, error.message);
          assert.ok(error.message.startsWith(`${field}: `), error.message);
          assert.match(error.message, pattern);
          return true;
        },
      );
    });
  }
});
