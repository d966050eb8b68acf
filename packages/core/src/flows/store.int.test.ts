import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import { createUser, principalOf } from "../users.ts";
import { requireMembership, type Membership } from "../workspaces.ts";
import { deployScript } from "../scripts.ts";
import {
  archiveFlow,
  createFlow,
  deleteFlow,
  flowExists,
  flowHistory,
  getFlow,
  listFlows,
  updateFlow,
} from "./store.ts";

let services: TestServices;
let admin: Membership;
let operator: Membership;
let developer: Membership;

const step = (id: string, expr = "flow_input.x") => ({
  id,
  value: {
    type: "rawscript",
    language: "bash",
    content: 'x="$1"\necho "$x"',
    input_transforms: { x: { type: "javascript", expr } },
  },
});

async function counts() {
  const { rows } = await services.pool.query<{ flows: number; versions: number; audits: number }>(
    `SELECT (SELECT count(*)::int FROM flow) AS flows, (SELECT count(*)::int FROM flow_version) AS versions,
            (SELECT count(*)::int FROM audit_log WHERE operation LIKE 'flows.%') AS audits`,
  );
  return rows[0]!;
}

describe("flow storage", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership: admin } = await createTestMember(services, "flowws"));
    for (const [email, role] of [
      ["op@example.com", "operator"],
      ["dev@example.com", "developer"],
    ] as const) {
      const user = await createUser(services, { email, password: "password123" });
      await services.db.workspaceMember.create({ data: { workspaceId: "flowws", userId: user.id, role } });
      const membership = await requireMembership(services, principalOf(user), "flowws");
      if (role === "operator") operator = membership;
      else developer = membership;
    }
  });
  after(() => services?.close());

  it("creates, reads, updates with the parent version, lists, archives and deletes, auditing each", async () => {
    const me = admin.principal.username;
    const path = `u/${me}/etl`;
    const created = await createFlow(services, admin, {
      path,
      summary: "ETL",
      value: { modules: [step("a")] },
      schema: { type: "object", properties: { x: { type: "string" } } },
    });
    assert.equal(created.summary, "ETL");
    assert.equal(created.edited_by, me);
    assert.ok(created.version_id > 0);
    await rejectsWith(
      createFlow(services, admin, { path, summary: "again", value: { modules: [] } }),
      "CONFLICT",
      "path",
    );

    const updated = await updateFlow(services, admin, path, {
      summary: "ETL 2",
      value: { modules: [step("a"), step("b", "results.a")] },
      parent_version: created.version_id,
    });
    assert.ok(updated.version_id > created.version_id);
    // A stale parent (someone deployed meanwhile) is refused, naming the field.
    await rejectsWith(
      updateFlow(services, admin, path, {
        summary: "stale",
        value: { modules: [] },
        parent_version: created.version_id,
      }),
      "CONFLICT",
      "parent_version",
    );
    assert.equal((await getFlow(services, admin, path)).summary, "ETL 2");
    assert.deepEqual(
      (await flowHistory(services, admin, path)).map((v) => v.id),
      [updated.version_id, created.version_id],
    );
    assert.equal(await flowExists(services, admin, path), true);
    assert.deepEqual(
      (await listFlows(services, admin)).map((f) => f.path),
      [path],
    );

    await archiveFlow(services, admin, path);
    assert.equal(await flowExists(services, admin, path), false);
    assert.equal((await getFlow(services, admin, path)).archived, true);
    assert.deepEqual(await listFlows(services, admin), []);
    assert.equal((await listFlows(services, admin, { showArchived: true })).length, 1);

    await deleteFlow(services, admin, path);
    await rejectsWith(getFlow(services, admin, path), "NOT_FOUND");
    const { rows } = await services.pool.query(
      "SELECT operation FROM audit_log WHERE resource = $1 AND operation LIKE 'flows.%' ORDER BY id",
      [path],
    );
    assert.deepEqual(
      rows.map((r) => r.operation),
      ["flows.create", "flows.update", "flows.archive", "flows.delete"],
    );
  });

  it("refuses a bad flow at deploy naming the step and field, and stores nothing", async () => {
    const me = admin.principal.username;
    const before = await counts();
    const cases: [unknown, string, RegExp][] = [
      [{ modules: [step("a"), step("a")] }, "value.modules[1].id", /a/],
      [
        { modules: [step("a", "results.b"), step("b")] },
        "value.modules[0].value.input_transforms.x.expr",
        /Step a/,
      ],
      [{ modules: [step("a", "flow_input.(")] }, "value.modules[0].value.input_transforms.x.expr", /Step a/],
      [{ modules: [{ id: "k", value: { type: "teleport" } }] }, "value.modules[0].value.type", /Step k/],
    ];
    for (const [value, field, pattern] of cases) {
      await rejectsWith(
        createFlow(services, admin, { path: `u/${me}/bad`, summary: "", value }),
        "INVALID_INPUT",
        field,
        pattern,
      );
    }
    assert.deepEqual(await counts(), before);
  });

  it("a step naming a script not deployed (or a hub script) deploys with warnings; the flow is stored as sent", async () => {
    const me = admin.principal.username;
    // As Windmill's CLI writes it: no input_transforms, parallelism a plain number.
    const value = {
      modules: [
        { id: "s", value: { type: "script", path: "u/nobody/missing" } },
        { id: "h", value: { type: "script", path: "hub/1/slack/send" } },
        {
          id: "l",
          value: {
            type: "forloopflow",
            iterator: { type: "javascript", expr: "[1]" },
            skip_failures: false,
            parallel: true,
            parallelism: 4,
            modules: [],
          },
        },
      ],
    };
    const deployed = await createFlow(services, admin, { path: `u/${me}/later`, summary: "", value });
    assert.deepEqual(
      deployed.warnings.map((w) => w.field),
      ["value.modules[0].value.path", "value.modules[1].value.path"],
    );
    assert.deepEqual((await getFlow(services, admin, `u/${me}/later`)).value, value);
  });

  it("a script step naming a deployed script is accepted", async () => {
    const me = admin.principal.username;
    await deployScript(services, admin, { path: `u/${me}/s`, language: "bash", content: "echo hi" });
    await createFlow(services, admin, {
      path: `u/${me}/uses`,
      summary: "",
      value: { modules: [{ id: "s", value: { type: "script", path: `u/${me}/s`, input_transforms: {} } }] },
    });
    assert.equal(await flowExists(services, admin, `u/${me}/uses`), true);
  });

  it("scopes flows by role and path as scripts are", async () => {
    const me = admin.principal.username;
    await rejectsWith(
      createFlow(services, operator, {
        path: `u/${operator.principal.username}/x`,
        summary: "",
        value: { modules: [] },
      }),
      "FORBIDDEN",
    );
    // A developer cannot write under another user's u/ path, nor read it.
    await rejectsWith(
      createFlow(services, developer, { path: `u/${me}/theirs`, summary: "", value: { modules: [] } }),
      "FORBIDDEN",
    );
    await rejectsWith(getFlow(services, developer, `u/${me}/uses`), "NOT_FOUND");
    assert.equal(await flowExists(services, developer, `u/${me}/uses`), false);
    assert.deepEqual(await listFlows(services, developer), []);
    const own = `u/${developer.principal.username}/mine`;
    await createFlow(services, developer, { path: own, summary: "", value: { modules: [] } });
    assert.deepEqual(
      (await listFlows(services, developer)).map((f) => f.path),
      [own],
    );
    // Another workspace's flows are not there at all.
    const { membership: stranger } = await createTestMember(services, "otherws");
    await rejectsWith(getFlow(services, stranger, own), "NOT_FOUND");
  });
});
