import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createKeyring, type SecretsContext } from "../secrets/index.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import { createUser, principalOf } from "../users.ts";
import { createVariable } from "../variables/variables.ts";
import { requireMembership, type Membership } from "../workspaces.ts";
import { resolveJobArgs } from "./job-args.ts";
import {
  createResourceType,
  deleteResourceType,
  listResourceTypes,
  resourceTypeExists,
} from "./resource-types.ts";
import {
  createResource,
  deleteResource,
  getResource,
  getResourceValueInterpolated,
  listResources,
  resourceExists,
  updateResource,
} from "./resources.ts";

const KEY = "test-instance-key-0123456789abcdefghijklmnop";

let services: TestServices;
let ctx: SecretsContext;
let admin: Membership;
let operator: Membership;
let me: string;

async function resourceRows(): Promise<string> {
  const { rows } = await services.pool.query<{ t: string | null }>(
    "SELECT string_agg(r::text, E'\\n' ORDER BY path) AS t FROM resource r",
  );
  return rows[0]!.t ?? "";
}

describe("resources and resource types", () => {
  before(async () => {
    services = await createTestServices();
    ctx = { ...services, secrets: createKeyring(KEY) };
    ({ membership: admin } = await createTestMember(services, "acme"));
    me = admin.principal.username;
    const user = await createUser(services, { email: "op@example.com", password: "password123" });
    await services.db.workspaceMember.create({
      data: { workspaceId: "acme", userId: user.id, role: "operator" },
    });
    operator = await requireMembership(services, principalOf(user), "acme");
    await createVariable(ctx, admin, { path: `u/${me}/pg_password`, value: "pg-secret", isSecret: true });
  });
  after(() => services?.close());

  it("stores a typed value with $var: references and resolves them for jobs", async () => {
    await createResource(ctx, admin, {
      path: `u/${me}/main_db`,
      resourceType: "postgresql",
      value: {
        host: "db.internal",
        port: 5432,
        user: "app",
        dbname: "app",
        password: `$var:u/${me}/pg_password`,
      },
      description: "main database",
    });
    const stored = await getResource(ctx, admin, `u/${me}/main_db`);
    assert.equal((stored.value as { password: string }).password, `$var:u/${me}/pg_password`);
    assert.ok(!(await resourceRows()).includes("pg-secret"));
    const value = (await getResourceValueInterpolated(ctx, admin, `u/${me}/main_db`)) as Record<
      string,
      unknown
    >;
    assert.equal(value.password, "pg-secret");
    assert.equal(value.host, "db.internal");

    const listed = await listResources(ctx, admin, { resourceType: "postgresql" });
    assert.deepEqual(
      listed.map((r) => [r.path, r.resourceType]),
      [[`u/${me}/main_db`, "postgresql"]],
    );
    assert.ok(!("value" in listed[0]!), "lists carry no values");
    assert.equal((await listResources(ctx, admin, { resourceTypeExclude: "postgresql" })).length, 0);
  });

  it("refuses a value that does not match its type, naming the field, and stores nothing", async () => {
    const before = await resourceRows();
    const create = (value: unknown, resourceType = "postgresql", path = `u/${me}/bad_db`) =>
      createResource(ctx, admin, { path, resourceType, value });
    await rejectsWith(
      create({ host: "h", user: "u", dbname: "d", port: "5432" }),
      "INVALID_INPUT",
      "value.port",
      /integer/,
    );
    await rejectsWith(create({ user: "u", dbname: "d" }), "INVALID_INPUT", "value.host", /required/);
    await rejectsWith(
      create({ host: "h", user: "u", dbname: "d", colour: 1 }),
      "INVALID_INPUT",
      "value.colour",
    );
    await rejectsWith(
      create({ host: "h", user: "u", dbname: "d", sslmode: "always" }),
      "INVALID_INPUT",
      "value.sslmode",
    );
    await rejectsWith(
      create({ host: "h", user: "u", dbname: "d", password: "$var:../etc" }),
      "INVALID_INPUT",
      "value.password",
    );
    await rejectsWith(create({}, "no_such_type"), "INVALID_INPUT", "resource_type");
    await rejectsWith(
      create({ host: "h", user: "u", dbname: "d" }, "postgresql", `u/${me}/../x`),
      "INVALID_INPUT",
      "path",
    );
    await rejectsWith(
      create({ host: "h", user: "u", dbname: "d" }, "postgresql", `u/${me}/my db`),
      "INVALID_INPUT",
      "path",
    );
    await rejectsWith(
      updateResource(ctx, admin, `u/${me}/main_db`, {
        value: { host: "h", user: "u", dbname: "d", port: 0 },
      }),
      "INVALID_INPUT",
      "value.port",
    );
    assert.equal(await resourceRows(), before, "nothing stored or changed");
    // A reference stands in for a value of any type.
    await create(
      { host: "h", user: "u", dbname: "d", port: `$var:u/${me}/pg_port` },
      "postgresql",
      `u/${me}/ref_db`,
    );
    await deleteResource(ctx, admin, `u/${me}/ref_db`);
  });

  it("supports workspace resource types with a validated schema", async () => {
    // A workspace type named like a built-in one shadows it there until it is deleted.
    const own = await createResourceType(ctx, admin, { name: "postgresql", schema: { type: "object" } });
    assert.equal(own.builtin, false);
    await deleteResourceType(ctx, admin, "postgresql");
    await rejectsWith(
      createResourceType(ctx, admin, { name: "Bad Name", schema: {} }),
      "INVALID_INPUT",
      "name",
    );
    await rejectsWith(
      createResourceType(ctx, admin, { name: "c_x", schema: { type: "nope" } }),
      "INVALID_INPUT",
      "schema",
    );
    await createResourceType(ctx, admin, {
      name: "c_webhook",
      schema: {
        type: "object",
        properties: { url: { type: "string" }, retries: { type: "integer" } },
        required: ["url"],
      },
      description: "an outgoing webhook",
    });
    assert.equal(await resourceTypeExists(ctx, admin, "c_webhook"), true);
    const names = (await listResourceTypes(ctx, admin)).map((t) => t.name);
    for (const name of ["postgresql", "mysql", "smtp", "s3", "state", "c_webhook"])
      assert.ok(names.includes(name), name);
    await rejectsWith(
      createResource(ctx, admin, {
        path: `f/ops/hook`,
        resourceType: "c_webhook",
        value: { url: "x", retries: "2" },
      }),
      "INVALID_INPUT",
      "value.retries",
    );
    await createResource(ctx, admin, { path: `f/ops/hook`, resourceType: "c_webhook", value: { url: "x" } });
    await rejectsWith(deleteResourceType(ctx, admin, "c_webhook"), "CONFLICT");
    await deleteResource(ctx, admin, "f/ops/hook");
    await deleteResourceType(ctx, admin, "c_webhook");
    assert.equal(await resourceTypeExists(ctx, admin, "c_webhook"), false);
  });

  it("follows $res: references and refuses loops", async () => {
    await createResource(ctx, admin, {
      path: `u/${me}/wrapper`,
      resourceType: "state",
      value: { db: `$res:u/${me}/main_db`, list: [`$var:u/${me}/pg_password`, 3] },
    });
    const value = (await getResourceValueInterpolated(ctx, admin, `u/${me}/wrapper`)) as {
      db: { password: string };
      list: unknown[];
    };
    assert.equal(value.db.password, "pg-secret");
    assert.deepEqual(value.list, ["pg-secret", 3]);
    await createResource(ctx, admin, {
      path: `u/${me}/loop_a`,
      resourceType: "state",
      value: `$res:u/${me}/loop_b`,
    });
    await createResource(ctx, admin, {
      path: `u/${me}/loop_b`,
      resourceType: "state",
      value: `$res:u/${me}/loop_a`,
    });
    await rejectsWith(
      getResourceValueInterpolated(ctx, admin, `u/${me}/loop_a`),
      "INVALID_INPUT",
      undefined,
      /loop/,
    );
  });

  it("lets an operator keep state under their own u/ but write nothing else", async () => {
    const op = operator.principal.username;
    await createResource(ctx, operator, {
      path: `u/${op}/state/f/x/job`,
      resourceType: "state",
      value: { n: 1 },
    });
    await updateResource(ctx, operator, `u/${op}/state/f/x/job`, { value: { n: 2 } });
    assert.deepEqual((await getResource(ctx, operator, `u/${op}/state/f/x/job`)).value, { n: 2 });
    await rejectsWith(
      createResource(ctx, operator, { path: `u/${op}/db`, resourceType: "api_key", value: { api_key: "k" } }),
      "FORBIDDEN",
    );
    await rejectsWith(
      createResource(ctx, operator, { path: `u/${me}/state/x`, resourceType: "state", value: 1 }),
      "FORBIDDEN",
    );
    await rejectsWith(getResource(ctx, operator, `u/${me}/main_db`), "NOT_FOUND");
    await rejectsWith(updateResource(ctx, operator, `u/${me}/main_db`, { description: "x" }), "FORBIDDEN");
    assert.equal(await resourceExists(ctx, operator, `u/${op}/state/f/x/job`), true);
  });

  it("resolves a job's $res:/$var: arguments as the job's user", async () => {
    const args = await resolveJobArgs(
      ctx,
      "acme",
      `u/${me}`,
      {
        db: `$res:u/${me}/main_db`,
        pw: `$var:u/${me}/pg_password`,
        n: 3,
        plain: "x",
      },
      null,
    );
    assert.equal((args.db as { password: string }).password, "pg-secret");
    assert.equal(args.pw, "pg-secret");
    assert.equal(args.n, 3);
    await rejectsWith(
      resolveJobArgs(ctx, "acme", `u/${operator.principal.username}`, { db: `$res:u/${me}/main_db` }, null),
      "NOT_FOUND",
      "args.db",
    );
  });

  it("renames and deletes, auditing each change without values", async () => {
    await updateResource(ctx, admin, `u/${me}/main_db`, {
      path: `u/${me}/primary_db`,
      description: "renamed",
    });
    assert.equal(await resourceExists(ctx, admin, `u/${me}/main_db`), false);
    await deleteResource(ctx, admin, `u/${me}/primary_db`);
    await rejectsWith(deleteResource(ctx, admin, `u/${me}/primary_db`), "NOT_FOUND");
    const { rows } = await services.pool.query<{ operation: string; parameters: unknown }>(
      "SELECT operation, parameters FROM audit_log WHERE resource LIKE $1 ORDER BY id",
      [`u/${me}/%_db`],
    );
    assert.ok(rows.some((r) => r.operation === "resources.update"));
    assert.ok(rows.some((r) => r.operation === "resources.delete"));
    assert.ok(!JSON.stringify(rows).includes("db.internal"));
  });
});
