import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { deployScript, getScriptByPath, listScripts, lookUpScriptAhead } from "./scripts.ts";
import { createTestMember, createTestServices, type TestServices, rejectsWith } from "./testing.ts";
import { requireMembership, type Membership } from "./workspaces.ts";
import { runScriptByPath } from "./jobs/run.ts";

let services: TestServices;
let membership: Membership;

describe("scripts", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "acme"));
  });
  after(() => services?.close());

  it("deploys immutable versions chained by parent hash", async () => {
    const first = await deployScript(services, membership, {
      path: "f/ops/hello",
      language: "bash",
      content: 'name="$1"\necho "$name"',
      summary: "v1",
    });
    assert.match(first.hash, /^[0-9a-f]{16}$/);
    assert.deepEqual(first.schema, {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { name: { type: "string", description: "" } },
      required: ["name"],
      order: ["name"],
    });
    await rejectsWith(
      deployScript(services, membership, { path: "f/ops/hello", language: "bash", content: "echo 2" }),
      "CONFLICT",
      "parent_hash",
    );
    const second = await deployScript(services, membership, {
      path: "f/ops/hello",
      language: "bash",
      content: "echo 2",
      parentHash: first.hash,
    });
    assert.equal(second.parentHash, first.hash);
    assert.equal((await getScriptByPath(services, membership, "f/ops/hello")).hash, second.hash);
    const old = await services.db.script.findUnique({
      where: { workspaceId_hash: { workspaceId: "acme", hash: first.hash } },
    });
    assert.equal(old?.content, 'name="$1"\necho "$name"', "an older version is kept unchanged");
    assert.equal((await listScripts(services, membership)).length, 1);
  });

  it("refuses bad input naming the field, storing nothing", async () => {
    const before = await services.db.script.count();
    await rejectsWith(
      deployScript(services, membership, { path: "scripts/x", language: "bash", content: "" }),
      "INVALID_INPUT",
      "path",
    );
    await rejectsWith(
      deployScript(services, membership, { path: "u/a/../b", language: "bash", content: "" }),
      "INVALID_INPUT",
      "path",
    );
    await rejectsWith(
      deployScript(services, membership, { path: "u/a/with space", language: "bash", content: "" }),
      "INVALID_INPUT",
      "path",
    );
    await rejectsWith(
      deployScript(services, membership, { path: "f/ops/x", language: "cobol", content: "" }),
      "INVALID_INPUT",
      "language",
      /unknown language "cobol"/,
    );
    await rejectsWith(
      deployScript(services, membership, {
        path: "f/ops/broken",
        language: "bun",
        content: "export function main(a: string {\n",
      }),
      "INVALID_INPUT",
      "content",
    );
    assert.equal(await services.db.script.count(), before);
  });

  it("running a missing script or with bad args is a 4xx naming the problem", async () => {
    await rejectsWith(
      runScriptByPath(services, membership, "f/ops/nope", {}),
      "NOT_FOUND",
      undefined,
      /f\/ops\/nope/,
    );
    await deployScript(services, membership, {
      path: "f/ops/typed",
      language: "python3",
      content: "def main(n: int, flag: bool = False):\n    return n\n",
    });
    await rejectsWith(runScriptByPath(services, membership, "f/ops/typed", {}), "INVALID_INPUT", "args.n");
    await rejectsWith(
      runScriptByPath(services, membership, "f/ops/typed", { n: "abc" }),
      "INVALID_INPUT",
      "args.n",
    );
    await rejectsWith(
      runScriptByPath(services, membership, "f/ops/typed", { n: 1 }, { priority: 500 }),
      "INVALID_INPUT",
      "priority",
    );
    assert.equal(await services.db.job.count(), 0, "no job was enqueued");
  });

  it("another workspace's scripts are invisible (404, not 403)", async () => {
    const { principal: outsider } = await createTestMember(services, "other");
    await rejectsWith(requireMembership(services, outsider, "acme"), "NOT_FOUND");
    const { membership: otherMembership } = await createTestMember(services, "other2");
    await rejectsWith(getScriptByPath(services, otherMembership, "f/ops/hello"), "NOT_FOUND");
    // A lookup started ahead for another workspace (or path) than the membership's is not used.
    const ahead = lookUpScriptAhead(services, "acme", "f/ops/hello");
    assert.equal((await ahead.script)?.path, "f/ops/hello", "the lookup itself found acme's script");
    await rejectsWith(getScriptByPath(services, otherMembership, "f/ops/hello", ahead), "NOT_FOUND");
    const elsewhere = lookUpScriptAhead(services, "acme", "f/ops/typed");
    assert.equal((await getScriptByPath(services, membership, "f/ops/hello", elsewhere)).path, "f/ops/hello");
  });
});
