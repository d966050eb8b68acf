import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ArgSchema } from "@millrace/runtime";
import { applyArgCustomizations, checkArgCustomizations } from "./arg-customizations.ts";
import { routeToDedicatedWorkers } from "./dependencies/dedicated.ts";
import type { EnqueueInput } from "./jobs/enqueue.ts";
import { runScriptByPath } from "./jobs/run.ts";
import { deployScript } from "./scripts.ts";
import { createTestMember, createTestServices, type TestServices, rejectsWith } from "./testing.ts";
import type { Membership } from "./membership.ts";

let services: TestServices;
let membership: Membership;

const CODE =
  "export async function main(color: string, count: number = 1) {\n  return { color, count };\n}\n";

describe("argument customisations and dedicated workers at deploy", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "custom-args"));
  });
  after(() => services?.close());

  it("checks customisations, naming the field", () => {
    assert.equal(checkArgCustomizations(undefined), null);
    assert.equal(checkArgCustomizations({ color: { description: "" } }), null, "empty ones are dropped");
    assert.throws(() => checkArgCustomizations({ color: { format: "nope" } }), {
      field: "arg_customizations.color.format",
    });
    assert.throws(() => checkArgCustomizations({ count: { min: 5, max: 1 } }), {
      field: "arg_customizations.count.max",
    });
    assert.throws(() => checkArgCustomizations({ color: { enum: ["a", "a"] } }), {
      field: "arg_customizations.color.enum",
    });
    assert.throws(() => checkArgCustomizations({ color: { enum: ["a"], default: "b" } }), {
      field: "arg_customizations.color.default",
    });
    assert.throws(() => checkArgCustomizations({ color: { colour: 1 } }), {
      field: "arg_customizations.color.colour",
    });
    const schema: ArgSchema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { count: { type: "number", description: "" } },
      required: [],
      order: ["count"],
    };
    const merged = applyArgCustomizations(schema, { count: { min: 1, max: 9 }, gone: { description: "x" } });
    assert.deepEqual(merged.properties.count, { type: "number", description: "", minimum: 1, maximum: 9 });
    assert.equal(merged.properties.gone, undefined);
  });

  it("merges customisations onto the inferred schema, keeps them on redeploy, and the run checks them", async () => {
    const first = await deployScript(services, membership, {
      path: "f/ops/colors",
      language: "bun",
      content: CODE,
      arg_customizations: {
        color: { description: "Pick one", enum: ["red", "green"], default: "red" },
        count: { min: 1, max: 10, description: "How many" },
      },
    });
    const schema = first.schema as unknown as ArgSchema;
    assert.deepEqual(schema.properties.color, {
      type: "string",
      description: "Pick one",
      enum: ["red", "green"],
      default: "red",
    });
    assert.equal((schema.properties.count as { maximum?: number }).maximum, 10);
    assert.deepEqual(schema.order, ["color", "count"]);
    await rejectsWith(
      runScriptByPath(services, membership, "f/ops/colors", { color: "blue" }),
      "INVALID_INPUT",
    );
    const second = await deployScript(services, membership, {
      path: "f/ops/colors",
      language: "bun",
      content: CODE.replace("{ color, count }", "{ color, count, v: 2 }"),
      parentHash: first.hash,
    });
    assert.deepEqual(
      (second.schema as unknown as ArgSchema).properties.color?.enum,
      ["red", "green"],
      "kept",
    );
    assert.deepEqual(second.argCustomizations, first.argCustomizations);
    const third = await deployScript(services, membership, {
      path: "f/ops/colors",
      language: "bun",
      content: CODE,
      parentHash: second.hash,
      arg_customizations: null,
    });
    assert.equal(
      (third.schema as unknown as ArgSchema).properties.color?.enum,
      undefined,
      "null clears them",
    );
    await rejectsWith(
      deployScript(services, membership, {
        path: "f/ops/colors",
        language: "bun",
        content: CODE,
        parentHash: third.hash,
        arg_customizations: { count: { min: "one" } },
      }),
      "INVALID_INPUT",
      "arg_customizations.count.min",
    );
  });

  it("stores dedicated_worker and routes a flagged script's runs to its dedicated tag", async () => {
    const script = await deployScript(services, membership, {
      path: "f/ops/dedicated",
      language: "bash",
      content: "echo hi",
      dedicated_worker: true,
    });
    assert.equal(script.dedicatedWorker, true);
    const plain = await deployScript(services, membership, {
      path: "f/ops/plain",
      language: "bash",
      content: "echo",
    });
    assert.equal(plain.dedicatedWorker, false);
    const base = { kind: "script", workspaceId: "custom-args", tag: "bash" } as unknown as EnqueueInput;
    const [flagged, other] = await routeToDedicatedWorkers(services.pool, [
      { ...base, scriptPath: "f/ops/dedicated", dedicatedWorker: true },
      { ...base, scriptPath: "f/ops/plain" },
    ]);
    assert.equal(flagged?.tag, "custom-args/f/ops/dedicated");
    assert.equal(other?.tag, "bash");
    const id = await runScriptByPath(services, membership, "f/ops/dedicated", {});
    const job = await services.db.job.findUnique({ where: { id } });
    assert.equal(job?.tag, "custom-args/f/ops/dedicated");
    await rejectsWith(
      deployScript(services, membership, {
        path: "f/ops/plain",
        language: "bash",
        content: "echo",
        parentHash: plain.hash,
        dedicated_worker: "yes" as unknown as boolean,
      }),
      "INVALID_INPUT",
      "dedicated_worker",
    );
  });
});
