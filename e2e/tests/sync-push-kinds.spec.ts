// `wmill sync push` (the real windmill-cli 1.819) for every kind Millrace has besides scripts:
// variables (plain and secret), resources (built-in and custom types), resource types, schedules,
// folders and groups; and a Windmill workspace's secrets imported through `--plain-secrets`.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";
import { addMember, createAccount, e2eDatabase } from "../fixtures/people.ts";
import { MILLRACE_WMILL_YAML, readTree, runWmill, wmill, writeTree } from "../fixtures/wmill.ts";

function api(request: APIRequestContext, workspace: string) {
  return {
    async post(route: string, data: unknown, status = 300) {
      const response = await request.post(`/api/w/${workspace}${route}`, { headers: superadmin, data });
      expect(response.status(), `${route}: ${await response.text()}`).toBeLessThan(status);
      return response;
    },
    async get(route: string) {
      const response = await request.get(`/api/w/${workspace}${route}`, { headers: superadmin });
      expect(response.status(), `${route}: ${await response.text()}`).toBe(200);
      return response.json();
    },
    async status(route: string) {
      return (await request.get(`/api/w/${workspace}${route}`, { headers: superadmin })).status();
    },
  };
}

/** Every row of the workspace as stored (timestamps included): a push that changes nothing keeps it. */
async function storedState(workspace: string) {
  const db = await e2eDatabase();
  try {
    const state: Record<string, unknown[]> = {};
    for (const [name, sql] of [
      ["variable", "SELECT * FROM variable WHERE workspace_id = $1 ORDER BY path"],
      ["resource", "SELECT * FROM resource WHERE workspace_id = $1 ORDER BY path"],
      ["resource_type", "SELECT * FROM resource_type WHERE workspace_id = $1 ORDER BY name"],
      // The ticker's own columns (next_run_at, last_run_at, error) left out.
      [
        "schedule",
        `SELECT path, schedule, timezone, script_path, is_flow, args, enabled, summary, created_by,
                permissioned_as, created_at, updated_at FROM schedule WHERE workspace_id = $1 ORDER BY path`,
      ],
      ["folder", "SELECT * FROM folder WHERE workspace_id = $1 ORDER BY name"],
      [
        "folder_permission",
        "SELECT * FROM folder_permission WHERE workspace_id = $1 ORDER BY folder_name, principal",
      ],
      ["group", `SELECT * FROM "group" WHERE workspace_id = $1 ORDER BY name`],
      ["group_member", "SELECT * FROM group_member WHERE workspace_id = $1 ORDER BY group_name, user_id"],
      // Writes leave an audit row each; reads of the export do not count.
      [
        "audit",
        `SELECT operation, resource FROM audit_log
          WHERE workspace_id = $1 AND operation NOT LIKE '%export%' AND operation NOT LIKE '%tarball%'
          ORDER BY id`,
      ],
    ] as const) {
      state[name] = (await db.query(sql, [workspace])).rows;
    }
    return state;
  } finally {
    await db.end();
  }
}

test("`wmill sync push` creates, updates and deletes variables, resources, resource types, schedules, folders and groups; pushing again changes nothing", async ({
  request,
  baseURL,
}) => {
  test.setTimeout(240_000);
  const workspace = uniqueWorkspace("pushkinds");
  await createWorkspace(request, workspace);
  const w = api(request, workspace);
  const alice = await createAccount(request, "alice");
  const bob = await createAccount(request, "bob");
  await addMember(request, workspace, alice.email, "developer");
  await addMember(request, workspace, bob.email, "developer");

  await w.post("/folders/create", { name: "ops", summary: "operations" });
  await w.post("/folders/create", { name: "old", summary: "to delete" });
  await w.post("/scripts/create", {
    path: "f/ops/hello",
    summary: "",
    description: "",
    language: "bash",
    content: 'echo "hello $1"\n',
  });
  await w.post("/variables/create", {
    path: "f/ops/greeting",
    value: "hi",
    is_secret: false,
    description: "",
  });
  await w.post("/variables/create", {
    path: "f/ops/token",
    value: "s3cr3t-kinds-never-in-git",
    is_secret: true,
    description: "",
  });
  await w.post("/variables/create", { path: "f/ops/stale", value: "old", is_secret: false, description: "" });
  await w.post("/resources/type/create", {
    name: "acme_api",
    schema: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
    description: "Acme",
  });
  await w.post("/resources/type/create", { name: "stale_type", schema: { type: "object" }, description: "" });
  await w.post("/resources/create", {
    path: "f/ops/api",
    resource_type: "api_key",
    value: { api_key: "$var:f/ops/token" },
    description: "",
  });
  await w.post("/resources/create", {
    path: "f/ops/acme",
    resource_type: "acme_api",
    value: { url: "https://a.example" },
    description: "",
  });
  await w.post("/resources/create", {
    path: "f/ops/stale_res",
    resource_type: "api_key",
    value: { api_key: "x" },
    description: "",
  });
  const schedule = (p: string, extra: Record<string, unknown> = {}) => ({
    path: p,
    schedule: "0 0 3 * * *",
    timezone: "Europe/Paris",
    script_path: "f/ops/hello",
    is_flow: false,
    args: {},
    enabled: false,
    ...extra,
  });
  await w.post("/schedules/create", schedule("f/ops/nightly"));
  await w.post("/schedules/create", schedule("f/ops/stale_sched"));
  await w.post("/groups/create", { name: "devs", summary: "developers" });
  await w.post(`/groups/adduser/devs`, { username: alice.username });
  await w.post("/groups/create", { name: "stale_group", summary: "" });

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-kinds-"));
  try {
    fs.writeFileSync(path.join(dir, "wmill.yaml"), MILLRACE_WMILL_YAML);
    wmill(dir, baseURL!, workspace, ["sync", "pull", "--yes"]);
    const pulled = readTree(dir);
    expect([...pulled.keys()]).toEqual(
      expect.arrayContaining([
        "f/ops/greeting.variable.yaml",
        "f/ops/token.variable.yaml",
        "f/ops/api.resource.yaml",
        "f/ops/acme.resource.yaml",
        "acme_api.resource-type.yaml",
        "f/ops/nightly.schedule.yaml",
        "f/ops/folder.meta.yaml",
        "f/old/folder.meta.yaml",
        "groups/devs.group.yaml",
      ]),
    );
    for (const text of pulled.values()) expect(text).not.toContain("s3cr3t-kinds-never-in-git");
    // Pulled and pushed back as is: nothing to apply.
    const before = await storedState(workspace);
    expect(wmill(dir, baseURL!, workspace, ["sync", "push", "--yes"])).toMatch(/0 changes to apply/);
    expect(await storedState(workspace)).toEqual(before);

    // Updates.
    writeTree(dir, {
      "f/ops/greeting.variable.yaml": "value: hello\nis_secret: false\ndescription: greets\n",
      "f/ops/token.variable.yaml": pulled
        .get("f/ops/token.variable.yaml")!
        .replace(/description: .*/, "description: the api token"),
      "acme_api.resource-type.yaml": [
        "schema:",
        "  $schema: https://json-schema.org/draft/2020-12/schema",
        "  type: object",
        "  properties:",
        "    url:",
        "      type: string",
        "      description: the base url",
        "  required:",
        "    - url",
        "description: Acme, Inc.",
        "",
      ].join("\n"),
      "f/ops/acme.resource.yaml":
        "value:\n  url: https://b.example\ndescription: the acme api\nresource_type: acme_api\n",
      "f/ops/nightly.schedule.yaml": [
        "schedule: 0 30 4 * * *",
        "timezone: Europe/Paris",
        "script_path: f/ops/hello",
        "is_flow: false",
        "args:",
        "  '1': night",
        "enabled: true",
        "",
      ].join("\n"),
      "f/ops/folder.meta.yaml": [
        "summary: operations team",
        "display_name: ops",
        "owners:",
        `  - u/${alice.username}`,
        "extra_perms:",
        "  g/devs: true",
        "",
      ].join("\n"),
      "groups/devs.group.yaml": [
        "summary: the developers",
        "admins: []",
        "members:",
        `  - u/${alice.username}`,
        `  - u/${bob.username}`,
        "",
      ].join("\n"),
    });
    // Creations.
    writeTree(dir, {
      "f/ops/fresh.variable.yaml": "value: brand new\nis_secret: false\ndescription: ''\n",
      "beta_api.resource-type.yaml": [
        "schema:",
        "  $schema: https://json-schema.org/draft/2020-12/schema",
        "  type: object",
        "  order:",
        "    - token",
        "  properties:",
        "    token:",
        "      type: string",
        "  required: []",
        "description: Beta",
        "",
      ].join("\n"),
      "f/ops/beta.resource.yaml":
        "value:\n  token: $var:f/ops/token\ndescription: ''\nresource_type: beta_api\n",
      "f/ops/key.resource.yaml": "value:\n  api_key: k-123\ndescription: a key\nresource_type: api_key\n",
      "f/ops/hourly.schedule.yaml": [
        "schedule: 0 0 * * * *",
        "timezone: Etc/UTC",
        "script_path: f/ops/hello",
        "is_flow: false",
        "args: {}",
        "enabled: true",
        "summary: every hour",
        "",
      ].join("\n"),
      "f/new/folder.meta.yaml": [
        "summary: a new folder",
        "display_name: new",
        "owners:",
        `  - u/${bob.username}`,
        "extra_perms:",
        "  g/devs: false",
        "",
      ].join("\n"),
      "groups/ops.group.yaml": [
        "summary: operators",
        "admins: []",
        "members:",
        `  - u/${bob.username}`,
        "",
      ].join("\n"),
    });
    // Deletions.
    for (const file of [
      "f/ops/stale.variable.yaml",
      "stale_type.resource-type.yaml",
      "f/ops/stale_res.resource.yaml",
      "f/ops/stale_sched.schedule.yaml",
      "f/old/folder.meta.yaml",
      "groups/stale_group.group.yaml",
    ]) {
      fs.rmSync(path.join(dir, file));
    }
    wmill(dir, baseURL!, workspace, ["sync", "push", "--yes"]);

    // Variables.
    const greeting = await w.get("/variables/get/f/ops/greeting");
    expect([greeting.value, greeting.description]).toEqual(["hello", "greets"]);
    const token = await w.get("/variables/get/f/ops/token?decrypt_secret=false");
    expect([token.is_secret, token.description]).toEqual([true, "the api token"]);
    expect(await w.get("/variables/get_value/f/ops/token")).toBe("s3cr3t-kinds-never-in-git");
    expect((await w.get("/variables/get/f/ops/fresh")).value).toBe("brand new");
    expect(await w.get("/variables/exists/f/ops/stale")).toBe(false);
    // Resource types: the schema kept verbatim, `$schema` included.
    const acme = await w.get("/resources/type/get/acme_api");
    expect(acme.description).toBe("Acme, Inc.");
    expect(acme.schema).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { url: { type: "string", description: "the base url" } },
      required: ["url"],
    });
    expect((await w.get("/resources/type/get/beta_api")).schema).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      order: ["token"],
      properties: { token: { type: "string" } },
      required: [],
    });
    expect(await w.get("/resources/type/exists/stale_type")).toBe(false);
    // Resources.
    const acmeResource = await w.get("/resources/get/f/ops/acme");
    expect([acmeResource.value, acmeResource.description]).toEqual([
      { url: "https://b.example" },
      "the acme api",
    ]);
    expect((await w.get("/resources/get/f/ops/beta")).value).toEqual({ token: "$var:f/ops/token" });
    expect((await w.get("/resources/get/f/ops/key")).resource_type).toBe("api_key");
    expect(await w.get("/resources/exists/f/ops/stale_res")).toBe(false);
    // Schedules, their enabled state included.
    const nightly = await w.get("/schedules/get/f/ops/nightly");
    expect([nightly.schedule, nightly.enabled, nightly.args]).toEqual([
      "0 30 4 * * *",
      true,
      { "1": "night" },
    ]);
    const hourly = await w.get("/schedules/get/f/ops/hourly");
    expect([hourly.schedule, hourly.enabled, hourly.timezone, hourly.summary]).toEqual([
      "0 0 * * * *",
      true,
      "Etc/UTC",
      "every hour",
    ]);
    expect(await w.get("/schedules/exists/f/ops/stale_sched")).toBe(false);
    // Folders with their owners and extra_perms.
    const ops = await w.get("/folders/get/ops");
    expect([ops.summary, ops.owners, ops.extra_perms]).toEqual([
      "operations team",
      [`u/${alice.username}`],
      { [`u/${alice.username}`]: true, "g/devs": true },
    ]);
    const fresh = await w.get("/folders/get/new");
    expect([fresh.summary, fresh.owners, fresh.extra_perms]).toEqual([
      "a new folder",
      [`u/${bob.username}`],
      { [`u/${bob.username}`]: true, "g/devs": false },
    ]);
    expect(await w.status("/folders/get/old")).toBe(404);
    // Groups and their members.
    const devs = await w.get("/groups/get/devs");
    expect([devs.summary, [...devs.members].sort()]).toEqual([
      "the developers",
      [alice.username, bob.username].sort(),
    ]);
    expect((await w.get("/groups/get/ops")).members).toEqual([bob.username]);
    expect(await w.status("/groups/get/stale_group")).toBe(404);

    // Pushed again: nothing to do, nothing touched (no updated_at bump, no new row, no audit row).
    const after = await storedState(workspace);
    expect(wmill(dir, baseURL!, workspace, ["sync", "push", "--yes"])).toMatch(/0 changes to apply/);
    expect(await storedState(workspace)).toEqual(after);
    // And a fresh pull gives back the repository as pushed.
    const again = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-kinds-again-"));
    try {
      fs.writeFileSync(path.join(again, "wmill.yaml"), MILLRACE_WMILL_YAML);
      wmill(again, baseURL!, workspace, ["sync", "pull", "--yes"]);
      const repulled = readTree(again);
      for (const file of [
        "f/ops/nightly.schedule.yaml",
        "acme_api.resource-type.yaml",
        "groups/devs.group.yaml",
      ])
        expect(repulled.get(file), file).toBeDefined();
      for (const text of repulled.values()) expect(text).not.toContain("s3cr3t-kinds-never-in-git");
    } finally {
      fs.rmSync(again, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a Windmill repository pulled with --plain-secrets is pushed with --plain-secrets: secrets stored encrypted with Millrace's key", async ({
  request,
  baseURL,
}) => {
  test.setTimeout(180_000);
  const workspace = uniqueWorkspace("import");
  await createWorkspace(request, workspace);
  const w = api(request, workspace);
  const plain = "windmill-plain-secret-4242";
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-import-"));
  try {
    // What `wmill sync pull --plain-secrets` writes from a Windmill instance.
    writeTree(dir, {
      "wmill.yaml": MILLRACE_WMILL_YAML,
      "f/imp/folder.meta.yaml": "summary: imported\ndisplay_name: imp\nowners: []\nextra_perms: {}\n",
      "f/imp/api_token.variable.yaml": `value: ${plain}\nis_secret: true\ndescription: from windmill\n`,
      "f/imp/region.variable.yaml": "value: eu-west-1\nis_secret: false\ndescription: ''\n",
      "f/imp/api.resource.yaml":
        "value:\n  api_key: $var:f/imp/api_token\ndescription: ''\nresource_type: api_key\n",
    });
    const pushed = wmill(dir, baseURL!, workspace, ["sync", "push", "--yes", "--plain-secrets"]);
    expect(pushed).not.toContain(plain);
    expect(await w.get("/variables/get_value/f/imp/api_token")).toBe(plain);
    expect((await w.get("/variables/get/f/imp/region")).value).toBe("eu-west-1");
    const db = await e2eDatabase();
    try {
      const stored = async () =>
        (
          await db.query("SELECT value, updated_at FROM variable WHERE workspace_id = $1 AND path = $2", [
            workspace,
            "f/imp/api_token",
          ])
        ).rows[0];
      const first = await stored();
      expect(first.value).toMatch(/^enc:v2:/);
      expect(first.value).not.toContain(plain);
      const audit = await db.query("SELECT parameters::text AS p FROM audit_log WHERE workspace_id = $1", [
        workspace,
      ]);
      for (const row of audit.rows) expect(row.p ?? "").not.toContain(plain);
      // Pushed again the same way: the secret is left as stored.
      wmill(dir, baseURL!, workspace, ["sync", "push", "--yes", "--plain-secrets"]);
      expect(await stored()).toEqual(first);
      // A secret rotated in the repository: the new value, encrypted again.
      const rotated = "windmill-rotated-4343";
      writeTree(dir, {
        "f/imp/api_token.variable.yaml": `value: ${rotated}\nis_secret: true\ndescription: from windmill\n`,
      });
      // (wmill's own diff shows the local file, plain value included: that output is the client's.)
      wmill(dir, baseURL!, workspace, ["sync", "push", "--yes", "--plain-secrets"]);
      expect(await w.get("/variables/get_value/f/imp/api_token")).toBe(rotated);
      const second = await stored();
      expect(second.value).toMatch(/^enc:v2:/);
      expect(second.value).not.toBe(first.value);
      // The workspace pulls back with the secret encrypted, never in plain text.
      const back = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-import-back-"));
      try {
        fs.writeFileSync(path.join(back, "wmill.yaml"), MILLRACE_WMILL_YAML);
        wmill(back, baseURL!, workspace, ["sync", "pull", "--yes"]);
        const token = readTree(back).get("f/imp/api_token.variable.yaml")!;
        expect(token).toMatch(/enc:v2:/);
        expect(token).not.toContain(plain);
        expect(token).not.toContain(rotated);
      } finally {
        fs.rmSync(back, { recursive: true, force: true });
      }

      // A secret still encrypted with the Windmill instance's key (pulled without --plain-secrets):
      // refused, saying how to export it instead, and nothing stored.
      const foreign = Buffer.alloc(48, 7).toString("base64");
      writeTree(dir, {
        "f/imp/foreign.variable.yaml": `value: ${foreign}\nis_secret: true\ndescription: ''\n`,
      });
      const refused = runWmill(dir, baseURL!, workspace, ["sync", "push", "--yes"]);
      expect(refused.status, refused.output).not.toBe(0);
      expect(refused.output).toContain("wmill sync pull --plain-secrets");
      expect(await w.get("/variables/exists/f/imp/foreign")).toBe(false);
    } finally {
      await db.end();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a secret marked already encrypted that is not this workspace's ciphertext is refused with 400", async ({
  request,
}) => {
  const workspace = uniqueWorkspace("foreign");
  await createWorkspace(request, workspace);
  for (const value of [Buffer.alloc(32, 1).toString("base64"), "enc:v1:not-ours"]) {
    const create = await request.post(`/api/w/${workspace}/variables/create?already_encrypted=true`, {
      headers: superadmin,
      data: { path: "u/admin/foreign", value, is_secret: true, description: "" },
    });
    expect(create.status()).toBe(400);
    const message = await create.text();
    expect(message).toMatch(/^value: /);
    expect(message).toContain("wmill sync pull --plain-secrets");
    expect(message).not.toContain(value);
  }
  const exists = await request.get(`/api/w/${workspace}/variables/exists/u/admin/foreign`, {
    headers: superadmin,
  });
  expect(await exists.json()).toBe(false);
});

test("acls: group_ takes a member, folder a grant; other kinds and non-members are refused naming the field", async ({
  request,
}) => {
  const workspace = uniqueWorkspace("acls");
  await createWorkspace(request, workspace);
  const w = api(request, workspace);
  const dev = await createAccount(request, "dev");
  await addMember(request, workspace, dev.email, "developer");
  await w.post("/groups/create", { name: "team", summary: "" });
  await w.post("/folders/create", { name: "shared", summary: "" });
  const acl = (route: string, data: unknown) =>
    request.post(`/api/w/${workspace}/acls/${route}`, { headers: superadmin, data });
  const refused = async (route: string, data: unknown, field: string) => {
    const response = await acl(route, data);
    expect(response.status()).toBe(400);
    expect(await response.text()).toMatch(new RegExp(`^${field}: `));
  };
  await refused("add/group_/team", { owner: `u/${dev.username}`, write: false }, "owner");
  await refused("add/group_/team", { owner: "g/other" }, "owner");
  await refused("add/variable/u/admin/x", { owner: `u/${dev.username}`, write: true }, "kind");
  await refused("add/folder/shared", { owner: "g/all", write: "yes" }, "write");
  await refused("add/folder/shared", {}, "owner");
  await w.post("/groups/adduser/team", { username: dev.username });
  expect((await acl("add/group_/team", { owner: `u/${dev.username}`, write: true })).status()).toBe(200);
  expect((await acl("add/folder/shared", { owner: "g/team", write: false })).status()).toBe(200);
  expect((await w.get("/folders/get/shared")).extra_perms["g/team"]).toBe(false);
  expect((await acl("remove/folder/shared", { owner: "g/team" })).status()).toBe(200);
  expect((await w.get("/folders/get/shared")).extra_perms["g/team"]).toBeUndefined();
  expect((await acl("add/group_/missing", { owner: `u/${dev.username}` })).status()).toBe(404);
});
