// Endpoints added with the route table for Windmill's clients (issue 23), served over HTTP by the
// web app's REST handler on a real PostgreSQL: windmill-client's setFlowUserState and
// getFlowUserState from a Node process, getGranularAcls, and the instance settings that
// `wmill instance pull` reads (listGlobalSettings, getInstanceConfig).
import assert from "node:assert/strict";
import type http from "node:http";
import { after, before, describe, it } from "node:test";
import {
  addGroupMember,
  createApiToken,
  createFlow,
  createFolder,
  createGroup,
  runFlowByPath,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { serveFetchHandler, stopAppServices, bearerCaller } from "./testing/node-server.ts";

const KEY = "added-endpoints-test-key-0123456789abcdef";
const SUPERADMIN = "added-endpoints-superadmin-secret";

let services: TestServices;
let server: http.Server;
let base: string;
let membership: Membership;
let me: string;
let token: string;
let outsiderToken: string;

const call = bearerCaller(
  () => base,
  () => token,
);

describe("endpoints added for Windmill's clients", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "extras"));
    me = membership.principal.username;
    token = await createApiToken(services, membership.principal, { label: "t" });
    const outsider = await createTestMember(services, "extras-other");
    outsiderToken = await createApiToken(services, outsider.principal, { label: "o" });
    process.env.DATABASE_URL = services.database.url;
    process.env.MILLRACE_SECRET_KEY = KEY;
    process.env.SUPERADMIN_SECRET = SUPERADMIN;
    const { handleRest } = await import("./handler.ts");
    ({ server, url: base } = await serveFetchHandler(handleRest));
  });
  after(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await stopAppServices();
    await services?.close();
  });

  it("windmill-client's setFlowUserState/getFlowUserState keep values for one flow run", async () => {
    await createFlow(services, membership, {
      path: `u/${me}/states`,
      summary: "",
      value: { modules: [{ id: "a", value: { type: "identity" } }] },
    });
    const flowId = await runFlowByPath(services, membership, `u/${me}/states`, {});
    const otherRun = await runFlowByPath(services, membership, `u/${me}/states`, {});

    // The real client, as a step of the flow calls it (its root job is the flow).
    process.env.WM_WORKSPACE = "extras";
    process.env.WM_TOKEN = token;
    process.env.BASE_INTERNAL_URL = base;
    process.env.WM_JOB_ID = flowId;
    const wmill = await import("windmill-client");
    wmill.setClient(token, base);
    assert.equal(await wmill.getFlowUserState("count", true), null, "nothing kept yet");
    await wmill.setFlowUserState("count", 1, true);
    await wmill.setFlowUserState("seen", { by: ["a", "b"] }, true);
    await wmill.setFlowUserState("count", 2, true);
    assert.equal(await wmill.getFlowUserState("count", true), 2);
    assert.deepEqual(await wmill.getFlowUserState("seen", true), { by: ["a", "b"] });

    // Kept in the run's flow_status, beside the engine's fields; another run has its own.
    const { rows } = await services.pool.query<{ s: Record<string, unknown> }>(
      "SELECT flow_status AS s FROM job WHERE id = $1",
      [flowId],
    );
    assert.deepEqual(rows[0]!.s.user_states, { count: 2, seen: { by: ["a", "b"] } });
    assert.ok("modules" in rows[0]!.s, "the engine's state is untouched");
    const other = await call("GET", `/api/w/extras/jobs/flow/user_states/${otherRun}/count`);
    assert.equal(other.status, 200);
    assert.equal(other.json(), null);

    // A job that is no flow, an unknown id, and a member of another workspace: 404.
    const missing = await call(
      "GET",
      "/api/w/extras/jobs/flow/user_states/00000000-0000-0000-0000-000000000000/k",
    );
    assert.equal(missing.status, 404, missing.text);
    assert.match(missing.text, /flow job .* not found/);
    const outsider = await call("POST", `/api/w/extras/jobs/flow/user_states/${flowId}/k`, 1, outsiderToken);
    assert.equal(outsider.status, 404);
    const tooLong = await call("POST", `/api/w/extras/jobs/flow/user_states/${flowId}/${"k".repeat(256)}`, 1);
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.text, /^key: /);
  });

  it("getGranularAcls: a folder's grants, a group's members, no grants on other items", async () => {
    const { principal: reader } = await createTestMember(services, "extras");
    await createFolder(services, membership, {
      name: "shared",
      extraPerms: { [`u/${reader.username}`]: false },
    });
    const folder = await call("GET", "/api/w/extras/acls/get/folder/shared");
    assert.equal(folder.status, 200, folder.text);
    assert.deepEqual(folder.json(), { [`u/${me}`]: true, [`u/${reader.username}`]: false });

    await createGroup(services, membership, { name: "ops", summary: null });
    await addGroupMember(services, membership, "ops", reader.username);
    const group = await call("GET", "/api/w/extras/acls/get/group_/ops");
    assert.deepEqual(group.json(), { [`u/${reader.username}`]: false });

    const variable = await call("GET", `/api/w/extras/acls/get/variable/u/${me}/anything`);
    assert.deepEqual([variable.status, variable.json()], [200, {}]);
    const noFolder = await call("GET", "/api/w/extras/acls/get/folder/nope");
    assert.equal(noFolder.status, 404);
    assert.equal(
      (await call("GET", "/api/w/extras/acls/get/folder/shared", undefined, outsiderToken)).status,
      404,
    );
  });

  it("listGlobalSettings and getInstanceConfig: superadmins only, instance secrets never", async () => {
    const set = await call("POST", "/api/settings/global/retention_period_secs", { value: 3600 }, SUPERADMIN);
    assert.equal(set.status, 200, set.text);
    await services.pool.query(
      `INSERT INTO instance_setting (key, value, updated_at) VALUES ('test_signing_secret', '"s3cr3t"', now())`,
    );
    const listed = await call("GET", "/api/settings/list_global", undefined, SUPERADMIN);
    assert.equal(listed.status, 200, listed.text);
    const settings = listed.json() as { name: string; value: unknown }[];
    assert.deepEqual(
      settings.find((s) => s.name === "retention_period_secs"),
      { name: "retention_period_secs", value: 3600 },
    );
    assert.ok(!listed.text.includes("s3cr3t"), "an instance secret is not listed");

    await call("POST", "/api/configs/update/worker__gpu", { worker_tags: ["gpu"] }, SUPERADMIN);
    const config = await call("GET", "/api/settings/instance_config", undefined, SUPERADMIN);
    assert.equal(config.status, 200, config.text);
    const body = config.json() as {
      global_settings: Record<string, unknown>;
      worker_configs: Record<string, unknown>;
    };
    assert.equal(body.global_settings.retention_period_secs, 3600);
    assert.deepEqual(body.worker_configs.gpu, { worker_tags: ["gpu"] });
    assert.ok(!config.text.includes("s3cr3t"));

    for (const path of ["/api/settings/list_global", "/api/settings/instance_config"]) {
      const refused = await call("GET", path);
      assert.equal(refused.status, 403, `${path}: ${refused.text}`);
    }
  });
});
