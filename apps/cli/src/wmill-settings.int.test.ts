// The real wmill (npm windmill-cli 1.819) and the workspace's settings against a live Millrace:
// `sync pull --include-settings` writes the settings.yaml that Millrace's git sync commits, byte for
// byte; a pull without the flag leaves it alone; `sync push --include-settings` of an edited
// settings.yaml applies it through the REST calls, and a second push has nothing to do.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  createApiToken,
  createKeyring,
  createUser,
  createWorkspace,
  principalOf,
  readRepositoryFiles,
} from "@millrace/core";
import { createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, type TestApi } from "@millrace/worker/testing";
import { runWmill } from "./testing.ts";

const KEY = "wmill-settings-instance-key-0123456789abcdef";
const WS = "settled";
const STORAGE = { type: "S3Storage", s3_resource_path: "$res:f/data/s3", public_resource: true };
const WMILL_YAML =
  "defaultTs: bun\nincludes:\n  - f/**\nexcludes: []\nnonDottedPaths: true\nsyncBehavior: v1\n";

describe("the real wmill CLI and settings.yaml", () => {
  let services: TestServices;
  let api: TestApi;
  let token: string;
  let home: string;
  let repo: string;

  const call = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${api.url}/api/w/${WS}/${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    assert.ok(response.ok, `${route}: ${response.status} ${text}`);
    return text;
  };
  const wmill = async (args: string[]) => {
    const run = await runWmill([...args, "--yes", "--skip-branch-validation"], {
      cwd: repo,
      home,
      instance: { url: api.url, token, workspace: WS },
    });
    assert.equal(run.code, 0, `wmill ${args.join(" ")}:\n${run.output}`);
    return run.output;
  };
  const settingsYaml = () => fs.readFileSync(path.join(repo, "settings.yaml"), "utf8");

  before(async () => {
    services = await createTestServices();
    const ctx = { ...services, secrets: createKeyring(KEY) };
    const admin = await createUser(ctx, { email: "set@example.com", password: "settings-password-1" });
    await createWorkspace(ctx, principalOf(admin), { id: WS, name: "Settled" });
    token = await createApiToken(services, principalOf(admin), { label: "wmill settings" });
    api = await startTestApi(services.database.url, KEY);
    home = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-settings-"));
    repo = path.join(home, "repo");
    fs.mkdirSync(repo);
    fs.writeFileSync(path.join(repo, "wmill.yaml"), WMILL_YAML);
    await call("POST", "resources/create", {
      path: "f/data/s3",
      resource_type: "s3",
      value: { bucket: "data", region: "us-east-1", endPoint: "s3.example.com", useSSL: true },
    });
    await call("POST", "workspaces/change_workspace_color", { color: "#336699" });
    await call("POST", "workspaces/edit_large_file_storage_config", { large_file_storage: STORAGE });
  });
  after(async () => {
    await api?.close();
    await services?.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it("sync pull --include-settings writes exactly the settings.yaml git sync commits; a pull without it leaves the file", async () => {
    await wmill(["sync", "pull"]);
    assert.equal(fs.existsSync(path.join(repo, "settings.yaml")), false, "only with --include-settings");
    await wmill(["sync", "pull", "--include-settings"]);
    const committed = (await readRepositoryFiles(services.pool, WS)).get("settings.yaml");
    assert.ok(committed);
    assert.equal(settingsYaml(), committed);
    assert.match(committed, /\ncolor: '#336699'\n/);
    await wmill(["sync", "pull"]);
    assert.equal(settingsYaml(), committed, "a pull without --include-settings keeps settings.yaml");
  });

  it("sync push --include-settings applies an edited color and removes the storage; then nothing to do", async () => {
    const same = await wmill(["sync", "push", "--include-settings"]);
    assert.doesNotMatch(same, /^[+~-] settings/m, same);
    fs.writeFileSync(
      path.join(repo, "settings.yaml"),
      settingsYaml()
        .replace("#336699", "#123456")
        .replace(/large_file_storage:\n( {2}.*\n)+/, ""),
    );
    const pushed = await wmill(["sync", "push", "--include-settings"]);
    assert.match(pushed, /~ settings settings\.yaml/, pushed);
    const settings = JSON.parse(await call("GET", "workspaces/get_settings")) as Record<string, unknown>;
    assert.equal(settings.color, "#123456");
    assert.equal(settings.large_file_storage, undefined);
    const again = await wmill(["sync", "push", "--include-settings"]);
    assert.doesNotMatch(again, /^[+~-] settings/m, again);
    assert.equal(
      settingsYaml(),
      (await readRepositoryFiles(services.pool, WS)).get("settings.yaml"),
      "the repository and the workspace agree again",
    );
  });
});
