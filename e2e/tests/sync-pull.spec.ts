import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "@playwright/test";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";
import { E2E_SUPERADMIN_SECRET } from "../instance.ts";

const wmillCli = fileURLToPath(new URL("../../node_modules/windmill-cli/esm/main.js", import.meta.url));

/** The real `wmill` (npm windmill-cli 1.819, Apache-2.0) in `dir`, against this instance. */
function wmill(dir: string, baseURL: string, workspace: string, args: string[]): string {
  const run = spawnSync(
    process.execPath,
    [
      wmillCli,
      ...args,
      "--base-url",
      `${baseURL}/`,
      "--token",
      E2E_SUPERADMIN_SECRET,
      "--workspace",
      workspace,
    ],
    {
      cwd: dir,
      encoding: "utf8",
      timeout: 120_000,
      env: { PATH: process.env.PATH, HOME: dir, WMILL_CONFIG_DIR: path.join(dir, ".config"), NO_COLOR: "1" },
    },
  );
  const output = `${run.stdout}${run.stderr}`;
  expect(run.status, output).toBe(0);
  return output;
}

function readTree(root: string, dir = root, out = new Map<string, string>()): Map<string, string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) readTree(root, full, out);
    else out.set(path.relative(root, full).split(path.sep).join("/"), fs.readFileSync(full, "utf8"));
  }
  return out;
}

test("the real `wmill sync pull` writes a Millrace workspace in Windmill's layout, secrets encrypted", async ({
  request,
  baseURL,
}) => {
  const workspace = uniqueWorkspace("pull");
  await createWorkspace(request, workspace);
  const post = async (route: string, data: unknown) => {
    const response = await request.post(`/api/w/${workspace}${route}`, { headers: superadmin, data });
    expect(response.status(), await response.text()).toBeLessThan(300);
  };
  await post("/folders/create", { name: "ops", summary: "operations" });
  await post("/scripts/create", {
    path: "f/ops/hello",
    summary: "says hello",
    description: "",
    language: "bash",
    content: 'name="$1"\necho "hello $name"\n',
  });
  await post("/scripts/create", {
    path: "u/admin/add",
    summary: "",
    description: "",
    language: "python3",
    content: "def main(a: int, b: int = 2):\n    return a + b\n",
  });
  await post("/variables/create", {
    path: "f/ops/token",
    value: "s3cr3t-never-in-git",
    is_secret: true,
    description: "",
  });
  await post("/variables/create", { path: "f/ops/greeting", value: "hi", is_secret: false, description: "" });
  await post("/resources/create", {
    path: "f/ops/api",
    resource_type: "api_key",
    value: { api_key: "$var:f/ops/token" },
    description: "",
  });
  await post("/schedules/create", {
    path: "f/ops/nightly",
    schedule: "0 0 3 * * *",
    timezone: "Europe/Paris",
    script_path: "f/ops/hello",
    is_flow: false,
    args: { name: "night" },
    enabled: false,
  });

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-pull-"));
  try {
    // Windmill's defaults leave schedules out; a wmill.yaml that asks for them (as Millrace's own
    // git sync writes) brings them.
    fs.writeFileSync(
      path.join(dir, "wmill.yaml"),
      "defaultTs: bun\nincludes:\n  - f/**\n  - u/**\nincludeSchedules: true\nskipSecrets: false\n",
    );
    wmill(dir, baseURL!, workspace, ["sync", "pull", "--yes"]);
    const files = readTree(dir);
    expect([...files.keys()].sort()).toEqual(
      expect.arrayContaining([
        "f/ops/hello.sh",
        "f/ops/hello.script.yaml",
        "f/ops/folder.meta.yaml",
        "f/ops/token.variable.yaml",
        "f/ops/greeting.variable.yaml",
        "f/ops/api.resource.yaml",
        "f/ops/nightly.schedule.yaml",
        "u/admin/add.py",
        "u/admin/add.script.yaml",
      ]),
    );
    expect(files.get("f/ops/hello.sh")).toBe('name="$1"\necho "hello $name"\n');
    expect(files.get("f/ops/hello.script.yaml")).toContain("summary: says hello");
    expect(files.get("f/ops/nightly.schedule.yaml")).toContain("timezone: Europe/Paris");
    const secret = files.get("f/ops/token.variable.yaml")!;
    expect(secret).toContain("is_secret: true");
    expect(secret).toMatch(/enc:v2:/);
    for (const text of files.values()) expect(text).not.toContain("s3cr3t-never-in-git");

    // The same workspace pulls to the same bytes: a second pull changes nothing.
    const again = wmill(dir, baseURL!, workspace, ["sync", "pull", "--yes"]);
    expect(readTree(dir)).toEqual(files);
    expect(again).toMatch(/No changes to apply|0 changes/i);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the real `wmill sync push` updates and archives scripts; pushing again changes nothing", async ({
  request,
  baseURL,
}) => {
  const workspace = uniqueWorkspace("push");
  await createWorkspace(request, workspace);
  for (const [name, content] of [
    ["keep", 'echo "kept"\n'],
    ["edit", 'echo "before"\n'],
    ["gone", 'echo "deleted soon"\n'],
  ]) {
    const response = await request.post(`/api/w/${workspace}/scripts/create`, {
      headers: superadmin,
      data: { path: `u/admin/${name}`, summary: name, description: "", language: "bash", content },
    });
    expect(response.status(), await response.text()).toBe(201);
  }
  const hashOf = async (name: string) =>
    (await request.get(`/api/w/${workspace}/scripts/get/p/u/admin/${name}`, { headers: superadmin })).json();
  const keepHash = (await hashOf("keep")).hash;

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-push-"));
  try {
    wmill(dir, baseURL!, workspace, ["sync", "pull", "--yes"]);
    expect(wmill(dir, baseURL!, workspace, ["sync", "push", "--yes"])).toMatch(/0 changes to apply/);
    fs.writeFileSync(path.join(dir, "u/admin/edit.sh"), 'echo "after"\n');
    fs.rmSync(path.join(dir, "u/admin/gone.sh"));
    fs.rmSync(path.join(dir, "u/admin/gone.script.yaml"));
    wmill(dir, baseURL!, workspace, ["sync", "push", "--yes"]);
    expect((await hashOf("edit")).content).toBe('echo "after"\n');
    const gone = await request.get(`/api/w/${workspace}/scripts/get/p/u/admin/gone`, { headers: superadmin });
    expect(gone.status()).toBe(404);
    // A script written as `wmill script new` writes it (empty lock, a schema of its own).
    fs.writeFileSync(path.join(dir, "u/admin/fresh.py"), "def main(x: int = 1):\n    return x * 2\n");
    fs.writeFileSync(
      path.join(dir, "u/admin/fresh.script.yaml"),
      [
        "summary: doubles",
        "description: ''",
        "lock: ''",
        "kind: script",
        "schema:",
        "  $schema: https://json-schema.org/draft/2020-12/schema",
        "  type: object",
        "  properties:",
        "    x:",
        "      type: integer",
        "      default: 1",
        "  required: []",
        "",
      ].join("\n"),
    );
    wmill(dir, baseURL!, workspace, ["sync", "push", "--yes"]);
    const fresh = await hashOf("fresh");
    expect(fresh.summary).toBe("doubles");
    const run = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/u/admin/fresh`, {
      headers: superadmin,
      data: { x: 21 },
    });
    expect(await run.json()).toBe(42);
    const editHash = (await hashOf("edit")).hash;
    // Pushed again unchanged: nothing to apply, no new version anywhere.
    expect(wmill(dir, baseURL!, workspace, ["sync", "push", "--yes"])).toMatch(/0 changes to apply/);
    expect((await hashOf("edit")).hash).toBe(editHash);
    expect((await hashOf("keep")).hash).toBe(keepHash);
    expect((await hashOf("fresh")).hash).toBe(fresh.hash);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the tarball holds secrets encrypted, in plain text only when an admin asks plain_secret=true, and names a bad flag", async ({
  request,
}) => {
  const workspace = uniqueWorkspace("tarball");
  await createWorkspace(request, workspace);
  const secret = await request.post(`/api/w/${workspace}/variables/create`, {
    headers: superadmin,
    data: { path: "u/admin/token", value: "tarball-plain-asked", is_secret: true, description: "" },
  });
  expect(secret.status()).toBe(201);
  const tarball = async (query: string) => {
    const response = await request.get(`/api/w/${workspace}/workspaces/tarball?archive_type=tar${query}`, {
      headers: superadmin,
    });
    expect(response.status()).toBe(200);
    return (await response.body()).toString("latin1");
  };
  // By default (wmill sync pull): the workspace's ciphertext.
  const encrypted = await tarball("");
  expect(encrypted).toContain("enc:v2:");
  expect(encrypted).not.toContain("tarball-plain-asked");
  // What `wmill sync pull/push --plain-secrets` asks: the plain value, as Windmill answers it.
  const plain = await tarball("&plain_secret=true");
  expect(plain).toContain("tarball-plain-asked");
  expect(plain).not.toContain("enc:v2:");
  const bad = await request.get(`/api/w/${workspace}/workspaces/tarball?archive_type=tar&plain_secret=yes`, {
    headers: superadmin,
  });
  expect(bad.status()).toBe(400);
  expect(await bad.text()).toMatch(/^plain_secret: /);
  const zip = await request.get(`/api/w/${workspace}/workspaces/tarball?archive_type=zip`, {
    headers: superadmin,
  });
  expect(zip.status()).toBe(400);
  expect(await zip.text()).toBe("Invalid Archive Type");
});
