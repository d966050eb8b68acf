// The declarative route table end to end, through the REST handler the server serves, on a real
// PostgreSQL: /api/openapi.json is a well-formed OpenAPI 3.1 document naming every declared route
// with its parameters; a bad field is refused with a 400 naming it, from the table's schemas; and
// an unknown endpoint under /api answers 404 naming its path.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createApiToken } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import type { DeclaredRoute } from "./define.ts";
import type { Route } from "./router.ts";
import { stopAppServices } from "./testing/node-server.ts";

const KEY = "openapi-test-instance-key-0123456789abcdef";

type Json = Record<string, unknown>;

let services: TestServices;
let handleRest: (request: Request) => Promise<Response>;
let routes: Route[];
let openApiPath: (pattern: string) => string;
let ws: string;
let me: string;
let auth: Record<string, string>;

function call(method: string, path: string, body?: unknown, headers: Record<string, string> = auth) {
  return handleRest(
    new Request(`http://millrace.test${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    }),
  );
}

/** A 400 whose message starts with `field: `, matching `message`, with x-error-field naming it. */
async function assertRefused(response: Response, field: string, message: RegExp) {
  const body = await response.text();
  assert.equal(response.status, 400, body);
  assert.ok(body.startsWith(`${field}: `), body);
  assert.match(body, message);
  assert.equal(response.headers.get("x-error-field"), field);
}

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);
const RESPONSE_KEY = /^(default|[1-5]XX|[1-5]\d\d)$/;
const JSON_SCHEMA_TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses): booleans, or objects whose `type`s are real ones. */
function checkSchema(schema: unknown, where: string, problems: string[]) {
  if (typeof schema === "boolean") return;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    problems.push(`${where}: a schema must be an object or a boolean`);
    return;
  }
  const s = schema as Json;
  const types = s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
  for (const type of types)
    if (!JSON_SCHEMA_TYPES.has(type as string)) problems.push(`${where}: unknown type ${String(type)}`);
  if (
    s.required !== undefined &&
    !(Array.isArray(s.required) && s.required.every((r) => typeof r === "string"))
  )
    problems.push(`${where}: required must be a list of names`);
  for (const key of ["properties", "patternProperties", "$defs"] as const)
    for (const [name, sub] of Object.entries((s[key] ?? {}) as Json))
      checkSchema(sub, `${where}.${key}.${name}`, problems);
  for (const key of ["items", "additionalProperties", "propertyNames", "not"] as const)
    if (s[key] !== undefined) checkSchema(s[key], `${where}.${key}`, problems);
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"] as const)
    if (s[key] !== undefined) {
      if (!Array.isArray(s[key])) problems.push(`${where}.${key}: must be a list`);
      else (s[key] as unknown[]).forEach((sub, i) => checkSchema(sub, `${where}.${key}[${i}]`, problems));
    }
}

function checkContent(content: unknown, where: string, problems: string[]) {
  if (typeof content !== "object" || content === null) {
    problems.push(`${where}: content must be an object`);
    return;
  }
  for (const [type, media] of Object.entries(content as Json)) {
    if (!/^[\w.+-]+\/[\w.+*-]+$/.test(type)) problems.push(`${where}: ${type} is not a media type`);
    if ((media as Json).schema !== undefined)
      checkSchema((media as Json).schema, `${where}.${type}`, problems);
  }
}

/**
 * The rules of the OpenAPI 3.1 specification that a generated document can break: the version,
 * info, path templates and their parameters, parameter locations, unique operationIds, response
 * keys, media types, security schemes, and the schemas. Returns every problem found.
 */
function openApiProblems(doc: Json): string[] {
  const problems: string[] = [];
  if (typeof doc.openapi !== "string" || !/^3\.1\.\d+$/.test(doc.openapi))
    problems.push("openapi: not 3.1.x");
  const info = doc.info as Json | undefined;
  if (typeof info?.title !== "string" || typeof info?.version !== "string")
    problems.push("info: title and version are required strings");
  const schemes = ((doc.components as Json | undefined)?.securitySchemes ?? {}) as Json;
  const checkSecurity = (security: unknown, where: string) => {
    if (!Array.isArray(security)) return problems.push(`${where}: security must be a list`);
    for (const requirement of security as Json[])
      for (const name of Object.keys(requirement))
        if (!(name in schemes)) problems.push(`${where}: unknown security scheme ${name}`);
  };
  if (doc.security !== undefined) checkSecurity(doc.security, "security");
  const operationIds = new Set<string>();
  const templates = new Map<string, string>();
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    if (!path.startsWith("/")) problems.push(`${path}: paths start with /`);
    // Two paths that differ only by their template names are the same path (the spec forbids it).
    const shape = path.replace(/\{[^}]+\}/g, "{}");
    if (templates.has(shape)) problems.push(`${path}: same template as ${templates.get(shape)}`);
    templates.set(shape, path);
    const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    for (const [method, op] of Object.entries(item as Json)) {
      const where = `${method.toUpperCase()} ${path}`;
      if (!HTTP_METHODS.has(method)) {
        problems.push(`${where}: not an HTTP method`);
        continue;
      }
      const operation = op as Json;
      const id = operation.operationId;
      if (typeof id !== "string" || operationIds.has(id))
        problems.push(`${where}: operationId missing or repeated`);
      operationIds.add(id as string);
      const parameters = (operation.parameters ?? []) as Json[];
      const seen = new Set<string>();
      for (const p of parameters) {
        if (typeof p.name !== "string" || !["path", "query", "header", "cookie"].includes(p.in as string))
          problems.push(`${where}: a parameter needs a name and a location`);
        if (seen.has(`${p.in} ${p.name}`)) problems.push(`${where}: parameter ${p.name} twice`);
        seen.add(`${p.in} ${p.name}`);
        if (p.in === "path" && (p.required !== true || !names.includes(p.name as string)))
          problems.push(`${where}: path parameter ${p.name} must be required and in the template`);
        if (p.schema === undefined) problems.push(`${where}: parameter ${p.name} has no schema`);
        else checkSchema(p.schema, `${where} ${p.name}`, problems);
      }
      for (const name of names)
        if (!seen.has(`path ${name}`)) problems.push(`${where}: {${name}} is not declared`);
      if (operation.requestBody !== undefined)
        checkContent((operation.requestBody as Json).content, `${where} body`, problems);
      const responses = operation.responses as Json | undefined;
      if (!responses || Object.keys(responses).length === 0) problems.push(`${where}: no responses`);
      for (const [code, response] of Object.entries(responses ?? {})) {
        if (!RESPONSE_KEY.test(code)) problems.push(`${where}: ${code} is not a response key`);
        if (typeof (response as Json).description !== "string")
          problems.push(`${where} ${code}: description is required`);
        if ((response as Json).content !== undefined)
          checkContent((response as Json).content, `${where} ${code}`, problems);
      }
      if (operation.security !== undefined) checkSecurity(operation.security, where);
    }
  }
  return problems;
}

describe("the declarative route table", () => {
  before(async () => {
    services = await createTestServices();
    const { principal } = await createTestMember(services, "openapi");
    ws = "openapi";
    me = principal.username;
    auth = { authorization: `Bearer ${await createApiToken(services, principal, { label: "t" })}` };
    process.env.DATABASE_URL = services.database.url;
    process.env.MILLRACE_SECRET_KEY = KEY;
    ({ handleRest } = await import("./handler.ts"));
    ({ routes } = await import("./routes/index.ts"));
    ({ openApiPath } = await import("./openapi.ts"));
  });
  after(async () => {
    await stopAppServices();
    await services?.close();
  });

  it("serves a valid OpenAPI 3.1 document naming every declared route with its parameters", async () => {
    // Public: no credential.
    const response = await call("GET", "/api/openapi.json", undefined, {});
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
    const doc = (await response.json()) as Json;
    assert.deepEqual(openApiProblems(doc), []);
    assert.equal(doc.openapi, "3.1.0");

    const paths = doc.paths as Record<string, Record<string, Json>>;
    const declared = routes.filter((route): route is DeclaredRoute => "spec" in route);
    assert.ok(declared.length > 150, `only ${declared.length} routes are declared`);
    // Every route is declared in the table (with defineRoute), none by hand.
    assert.deepEqual(
      routes.filter((route) => !("spec" in route)).map((route) => `${route.method} ${route.pattern}`),
      [],
    );
    for (const route of routes) {
      const op = paths[openApiPath(route.pattern)]?.[route.method.toLowerCase()];
      assert.ok(op, `${route.method} ${route.pattern} is missing from the document`);
      if (!("spec" in route)) continue;
      const { spec } = route as DeclaredRoute;
      const where = `${route.method} ${route.pattern}`;
      assert.equal(op.summary, spec.summary, where);
      assert.deepEqual(op.tags, [spec.tag], where);
      const parameters = (op.parameters ?? []) as Json[];
      const pathNames = [...route.pattern.matchAll(/[:*]([A-Za-z_]+)/g)].map((m) => m[1]);
      assert.deepEqual(
        parameters.filter((p) => p.in === "path").map((p) => p.name),
        pathNames,
        `${where}: path parameters`,
      );
      const queryNames = spec.query
        ? Object.keys((spec.query as unknown as { shape: Record<string, unknown> }).shape)
        : [];
      assert.deepEqual(
        parameters.filter((p) => p.in === "query").map((p) => p.name),
        queryNames,
        `${where}: query parameters`,
      );
      assert.equal(op.requestBody !== undefined, spec.body !== undefined, `${where}: request body`);
      if (spec.auth === "public") assert.deepEqual(op.security, [], `${where} is public`);
      else assert.equal(op.security, undefined, `${where} needs the document's bearer token`);
    }

    // A few operations as Windmill's clients know them, spot-checked in full.
    const list = paths["/w/{workspace}/variables/list"]!.get!;
    assert.equal(list.summary, "listVariable");
    const page = (list.parameters as Json[]).find((p) => p.name === "page")!;
    assert.deepEqual([page.in, page.required], ["query", false]);
    const create = paths["/w/{workspace}/variables/create"]!.post!;
    const bodySchema = ((create.requestBody as Json).content as Record<string, Json>)["application/json"]!
      .schema as Json;
    assert.deepEqual(bodySchema.required, ["path", "value"]);
    const tarball = paths["/w/{workspace}/workspaces/tarball"]!.get!;
    assert.ok(((tarball.responses as Json)["2XX"] as { content: Json }).content["application/x-tar"]);
    assert.deepEqual(paths["/w/{workspace}/jobs_u/resume/{id}/{resume_id}/{signature}"]!.get!.security, []);
    assert.deepEqual(paths["/auth/login"]!.post!.security, []);
  });

  it("the checker above finds what an invalid document gets wrong", () => {
    const broken = {
      openapi: "3.0.0",
      info: { title: "x" },
      paths: {
        "/w/{workspace}/a/{name}": {
          get: {
            operationId: "a",
            parameters: [{ name: "workspace", in: "path", required: true, schema: {} }],
          },
          post: {
            operationId: "a",
            responses: { "2XX": { description: "ok", content: { json: { schema: { type: "text" } } } } },
          },
        },
        "/w/{ws}/a/{n}": { fetch: {} },
      },
    };
    const problems = openApiProblems(broken);
    for (const expected of [
      /^openapi: not 3\.1/,
      /^info:/,
      /GET \/w\/\{workspace\}\/a\/\{name\}: \{name\} is not declared/,
      /GET .*: no responses/,
      /POST .*: operationId missing or repeated/,
      /POST .*: json is not a media type/,
      /same template as/,
      /^FETCH .*: not an HTTP method/,
      /unknown type text/,
    ])
      assert.ok(
        problems.some((p) => expected.test(p)),
        `${expected} not in ${JSON.stringify(problems)}`,
      );
  });

  it("refuses a bad field with a 400 naming it, from the route's declared schemas", async () => {
    const w = `/api/w/${ws}`;
    // Body: a wrong type, a missing field, a body that is not an object, and an invalid nested value.
    await assertRefused(
      await call("POST", `${w}/variables/create`, { path: 3, value: "x" }),
      "path",
      /^path: must be a string$/,
    );
    await assertRefused(
      await call("POST", `${w}/variables/create`, { path: "u/x/v" }),
      "value",
      /^value: is required$/,
    );
    // Without a valid credential the answer is 401, whatever the input lacks.
    const stranger = await call(
      "POST",
      `${w}/variables/create`,
      { path: 3 },
      { authorization: "Bearer not-a-token" },
    );
    assert.equal(stranger.status, 401, await stranger.text());
    await assertRefused(
      await call("POST", `${w}/groups/create`, [1, 2]),
      "body",
      /^body: must be a JSON object$/,
    );
    await assertRefused(
      await call("POST", `${w}/schedules/setenabled/u/x/s`, { enabled: "yes" }),
      "enabled",
      /^enabled: must be true or false$/,
    );
    await assertRefused(
      await call("POST", `${w}/schedules/setenabled/u/x/s`, {}),
      "enabled",
      /^enabled: is required \(true or false\)$/,
    );
    await assertRefused(
      await call("POST", "/api/settings/global/retention_period_secs", { valeu: 1 }),
      "value",
      /^value: is required \(send null to remove the setting\)$/,
    );
    // Query strings: a number, a flag, an enumeration.
    await assertRefused(
      await call("GET", `${w}/variables/list?page=two`),
      "page",
      /^page: must be a whole number$/,
    );
    await assertRefused(
      await call("GET", `${w}/variables/get/u/x/v?decrypt_secret=maybe`),
      "decrypt_secret",
      /^decrypt_secret: must be true or false$/,
    );
    await assertRefused(
      await call("GET", `${w}/audit/list?action_kind=Exploded`),
      "action_kind",
      /^action_kind: must be one of Created, Updated, Delete, Execute$/,
    );
    await assertRefused(
      await call("GET", `${w}/variables/list?per_page=1e308`),
      "per_page",
      /^per_page: is out of range$/,
    );
    // A name given twice: the first value for a field that takes one (as URLSearchParams.get).
    const twice = await call("GET", `${w}/variables/list?per_page=1000&per_page=oops`);
    assert.equal(twice.status, 200, await twice.clone().text());
    // An empty query value is no value, as before the table.
    const listed = await call("GET", `${w}/variables/list?page=&path_start=`);
    assert.equal(listed.status, 200, await listed.clone().text());
    assert.deepEqual(await listed.json(), []);
    // Well-formed (null for an optional field, as Windmill's clients send it), the call goes through.
    const created = await call("POST", `${w}/variables/create`, {
      path: `u/${me}/v`,
      value: "1",
      is_secret: null,
      description: null,
    });
    assert.equal(created.status, 201, await created.clone().text());
    assert.equal(await created.text(), `u/${me}/v`);
  });

  it("answers an unknown endpoint under /api with 404 naming the path", async () => {
    for (const path of [`/api/w/${ws}/no_such_thing/list`, "/api/nothing/here", "/api/variables/list"]) {
      const response = await call("GET", path);
      assert.equal(response.status, 404, path);
      assert.equal(await response.text(), `no route for ${path}`);
    }
    // A known path with another method is a 405, not a 404.
    const wrongMethod = await call("DELETE", `/api/w/${ws}/variables/list`);
    assert.equal(wrongMethod.status, 405);
  });
});
