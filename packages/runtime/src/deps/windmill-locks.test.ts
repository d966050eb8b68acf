import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatNpmLock } from "./install.ts";
import { planLock } from "./windmill-locks.ts";

describe("planLock (locks written by Windmill)", () => {
  it("keeps a python lock's pins, without Windmill's interpreter header", () => {
    assert.deepEqual(planLock("python3", "# py: 3.11\nrequests==2.31.0\nurllib3==2.0.7\n", ""), {
      kind: "locked",
      lock: "requests==2.31.0\nurllib3==2.0.7",
    });
  });

  it("resolves from the script when a python lock holds anything but pins", () => {
    const content = "# requirements:\n# requests==2.31.0\nimport requests\n";
    assert.deepEqual(planLock("python3", "--index-url http://elsewhere/\nrequests==2.31.0", content), {
      kind: "resolve",
      requirements: { language: "python3", packages: ["requests==2.31.0"] },
    });
  });

  it("takes a bun lock's dependencies at the versions its bun.lock resolved", () => {
    const lock =
      '{\n  "dependencies": {\n    "is-odd": "^3",\n    "lodash": "npm:lodash@4"\n  }\n}\n//bun.lock\n{\n  "lockfileVersion": 1,\n  "packages": {\n    "is-odd": ["is-odd@3.0.1", "", {}, "sha512-x"],\n  },\n}\n';
    assert.deepEqual(planLock("bun", lock, ""), {
      kind: "resolve",
      requirements: {
        language: "bun",
        packages: [
          { alias: "is-odd", name: "is-odd", version: "3.0.1" },
          { alias: "lodash", name: "lodash", version: "4" },
        ],
      },
    });
  });

  it("reads an empty package.json, a deno.lock or a bun.lockb from the script's imports", () => {
    for (const lock of [
      "{}\n//bun.lock\n{}",
      '{ "version": "4" }',
      '{"dependencies":{"a":"1"}}\n//bun.lockb\nAAAA',
    ]) {
      const plan = planLock("deno", lock, "export function main() {}\n");
      if (lock.includes("lockb")) {
        assert.deepEqual(plan, {
          kind: "resolve",
          requirements: { language: "deno", packages: [{ alias: "a", name: "a", version: "1" }] },
        });
      } else assert.deepEqual(plan, { kind: "resolve", requirements: null }, lock);
    }
  });

  it("keeps Millrace's own lock, and puts a multi-line package.json on one line", () => {
    const own = formatNpmLock('{"dependencies":{"a":"1"}}', "{}");
    assert.deepEqual(planLock("bun", own, ""), { kind: "locked", lock: own });
    assert.deepEqual(planLock("bun", '# package.json\n{\n  "dependencies": {}\n}\n# bun.lock\n{}', ""), {
      kind: "locked",
      lock: '# package.json\n{"dependencies":{}}\n# bun.lock\n{}',
    });
  });
});
