import {
  expect,
  request as playwrightRequest,
  test,
  type APIRequestContext,
  type APIResponse,
} from "@playwright/test";
import { E2E_BASE_URL } from "../instance.ts";
import { ALLOWED, DENIED, buildWorld, type Role, type World } from "../fixtures/authz-world.ts";
import { REST_MATRIX, fill, type Call } from "../fixtures/rest-matrix.ts";
import { readSurface } from "../fixtures/surface.ts";
import { superadmin } from "./helpers.ts";
import { TRPC_MATRIX, closeMatrixS3, trpcInput } from "../fixtures/trpc-matrix.ts";

// The routes and procedures the server really has, read from its code when this file loads.
const surface = readSurface();
const restRoutes = surface.rest;
const procedures = surface.trpc;

let world: World;
/**
 * The context the checks call through, new for each test: a login answer sets a `token` cookie,
 * and a cookie left over from one call would make the next "anonymous" call signed in.
 */
let client: APIRequestContext;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  world = await buildWorld(await playwrightRequest.newContext({ baseURL: E2E_BASE_URL }));
});

test.afterAll(async () => {
  await closeMatrixS3();
  if (!world) return;
  // Worker group configs are instance-wide (the Workers page lists them): leave none behind.
  const groups = await (
    await world.request.get("/api/configs/list_worker_groups", { headers: superadmin })
  ).json();
  for (const { name } of groups as { name: string }[]) {
    if (name.startsWith("authz_"))
      await world.request.delete(`/api/configs/delete/worker__${name}`, { headers: superadmin });
  }
  await world.request.dispose();
});

test.beforeEach(async () => {
  client = await playwrightRequest.newContext({ baseURL: E2E_BASE_URL });
});

test.afterEach(async () => {
  await client.dispose();
});

async function describe(response: APIResponse): Promise<string> {
  return `${response.status()} ${(await response.text()).slice(0, 300)}`;
}

function isWorkspaceRoute(key: string): boolean {
  return key.includes("/api/w/:workspace/");
}

test("the matrix names every REST route and tRPC procedure, and nothing else", () => {
  const missingRest = restRoutes.filter((key) => !(key in REST_MATRIX));
  const staleRest = Object.keys(REST_MATRIX).filter((key) => !restRoutes.includes(key));
  const names = procedures.map((p) => p.path);
  const missingTrpc = names.filter((name) => !(name in TRPC_MATRIX));
  const staleTrpc = Object.keys(TRPC_MATRIX).filter((name) => !names.includes(name));
  expect({ missingRest, staleRest, missingTrpc, staleTrpc }).toEqual({
    missingRest: [],
    staleRest: [],
    missingTrpc: [],
    staleTrpc: [],
  });
  expect(restRoutes.length).toBeGreaterThan(50);
  expect(procedures.length).toBeGreaterThan(40);
});

async function sendRest(method: string, call: Call, role: Role): Promise<APIResponse> {
  const options = { headers: world.headers[role], failOnStatusCode: false, maxRedirects: 0, timeout: 60_000 };
  if (method === "GET") return client.get(call.path, options);
  if (method === "DELETE") return client.delete(call.path, options);
  return client.post(call.path, { ...options, data: call.body ?? {} });
}

for (const key of restRoutes) {
  const entry = REST_MATRIX[key];
  if (!entry) continue;
  const [method, pattern] = key.split(" ") as [string, string];
  test(`REST ${key}: ${entry.access}`, async () => {
    const call = (await entry.call?.(world)) ?? { path: fill(pattern, world) };
    if (entry.access !== "public") {
      const anonymous = await sendRest(method, call, "anonymous");
      expect(anonymous.status(), `anonymous: ${await describe(anonymous)}`).toBe(401);
    }
    if (isWorkspaceRoute(key)) {
      const outsider = await sendRest(method, call, "outsider");
      expect(outsider.status(), `member of another workspace: ${await describe(outsider)}`).toBe(404);
    }
    for (const role of DENIED[entry.access]) {
      const denied = await sendRest(method, call, role);
      expect(denied.status(), `${role}: ${await describe(denied)}`).toBe(403);
    }
    const allowedAs = entry.allowedAs ?? ALLOWED[entry.access];
    const allowed = await sendRest(method, call, allowedAs);
    if (entry.allowedStatus) {
      expect(allowed.status(), `${allowedAs}: ${await describe(allowed)}`).toBe(entry.allowedStatus);
      return;
    }
    expect(allowed.status(), `${allowedAs}: ${await describe(allowed)}`).toBeGreaterThanOrEqual(200);
    expect(allowed.status(), `${allowedAs}: ${await describe(allowed)}`).toBeLessThan(300);
  });
}

async function sendTrpc(path: string, type: string, input: unknown, role: Role): Promise<APIResponse> {
  const options = { headers: world.headers[role], failOnStatusCode: false, timeout: 60_000 };
  if (type === "query") {
    const query = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
    return client.get(`/api/trpc/${path}${query}`, options);
  }
  return client.post(`/api/trpc/${path}`, {
    ...options,
    ...(input === undefined ? {} : { data: input }),
  });
}

for (const { path, type } of procedures) {
  const entry = TRPC_MATRIX[path];
  if (!entry) continue;
  test(`tRPC ${path}: ${entry.access}`, async () => {
    const input = await trpcInput(entry, world);
    if (entry.access !== "public") {
      const anonymous = await sendTrpc(path, type, input, "anonymous");
      expect(anonymous.status(), `anonymous: ${await describe(anonymous)}`).toBe(401);
    }
    if (["member", "developer", "admin"].includes(entry.access)) {
      const outsider = await sendTrpc(path, type, input, "outsider");
      expect(outsider.status(), `member of another workspace: ${await describe(outsider)}`).toBe(404);
    }
    for (const role of DENIED[entry.access]) {
      const denied = await sendTrpc(path, type, input, role);
      expect(denied.status(), `${role}: ${await describe(denied)}`).toBe(403);
    }
    const allowedAs = entry.allowedAs ?? ALLOWED[entry.access];
    const allowed = await sendTrpc(path, type, input, allowedAs);
    expect(allowed.status(), `${allowedAs}: ${await describe(allowed)}`).toBe(200);
  });
}

test("guessing another workspace's job ids, script paths, variables, resources and schedules returns 404 and no data", async () => {
  const w = world;
  const outsider = w.headers.outsider;
  const secrets = [w.secretValue, "hello-from-a", "plain-value", "a.internal"];
  const guesses = [
    `/jobs_u/get/${w.jobId}`,
    `/jobs_u/completed/get_result/${w.jobId}`,
    `/jobs_u/getupdate/${w.jobId}`,
    `/jobs_u/getupdate_sse/${w.jobId}`,
    `/scripts/get/p/${w.script}`,
    `/scripts/get/h/${w.hash}`,
    `/variables/get/${w.secret}?decrypt_secret=true`,
    `/variables/get_value/${w.secret}`,
    `/variables/get/${w.variable}`,
    `/resources/get/${w.resource}`,
    `/resources/get_value/${w.resource}`,
    `/resources/get_value_interpolated/${w.resource}`,
    `/schedules/get/${w.schedule}`,
    `/scripts/list_tokens/${w.script}`,
  ];
  // In the outsider's own workspace the ids and paths of A do not exist; in A they are not a member.
  for (const workspace of [w.other, w.ws]) {
    for (const guess of guesses) {
      const response = await client.get(`/api/w/${workspace}${guess}`, { headers: outsider });
      const body = await response.text();
      expect(response.status(), `${workspace}${guess}: ${body}`).toBe(404);
      for (const secret of secrets) expect(body, `${workspace}${guess}`).not.toContain(secret);
    }
    const cancel = await client.post(`/api/w/${workspace}/jobs_u/queue/cancel/${w.jobId}`, {
      headers: outsider,
      data: {},
    });
    expect(cancel.status()).toBe(404);
  }
  // Lists in the outsider's workspace never include A's items.
  for (const list of [
    "/jobs/list",
    "/scripts/list",
    "/variables/list",
    "/resources/list",
    "/schedules/list",
  ]) {
    const response = await client.get(`/api/w/${w.other}${list}`, { headers: outsider });
    expect(response.status()).toBe(200);
    const body = await response.text();
    for (const secret of [w.jobId, w.script, w.secret, w.resource, w.schedule])
      expect(body, list).not.toContain(secret);
  }
  // Filters naming A's paths find nothing either.
  const filtered = await client.get(`/api/w/${w.other}/jobs/list?script_path_exact=${w.script}`, {
    headers: outsider,
  });
  expect(await filtered.json()).toEqual([]);
});
