// The real `wmill` (npm windmill-cli 1.819, Apache-2.0) against Millrace's REST router with a
// real worker, as a team moving from Windmill uses it: `workspace add` (with and without
// `--create`) and `workspace whoami`, `script push` (twice: the second makes no version),
// `script run` in each of the five languages, `script preview`, `generate-metadata` (a real
// lock from a dependency job against a local package index), `user add` and `user remove`.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  createApiToken,
  createFolder,
  createKeyring,
  createResource,
  createUser,
  principalOf,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "@millrace/worker/testing";
import { buildWheel, serveIndex } from "../../../packages/runtime/src/deps/testing.ts";
import { runWmill, type WmillRun } from "./testing.ts";

const KEY = "wmill-cli-instance-key-0123456789abcdefghij";
const WS = "wmillcli";

type Run = WmillRun;

describe("the real wmill CLI: workspaces, users and scripts", () => {
  let services: TestServices;
  let membership: Membership;
  let api: TestApi;
  let worker: TestWorker;
  let index: Awaited<ReturnType<typeof serveIndex>>;
  let token: string;
  let devToken: string;
  let scratch: string;
  let dir: string;

  /**
   * Runs wmill in `cwd`. With `flags` (the default) it is given the instance, token and
   * workspace; without, it uses its profiles.
   */
  function wmill(
    args: string[],
    options: { cwd?: string; flags?: boolean; home?: string } = {},
  ): Promise<Run> {
    return runWmill(args, {
      cwd: options.cwd ?? dir,
      home: options.home ?? scratch,
      ...(options.flags === false ? {} : { instance: { url: api.url, token, workspace: WS } }),
    });
  }
  async function ok(args: string[], options: { cwd?: string; flags?: boolean; home?: string } = {}) {
    const run = await wmill(args, options);
    assert.equal(run.code, 0, `wmill ${args.join(" ")}:\n${run.output}`);
    return run;
  }
  /** The last line of a `-s` run's stdout, as JSON. */
  const lastJson = (run: Run): unknown => JSON.parse(run.stdout.trim().split("\n").pop()!);
  const write = (root: string, file: string, content: string) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), content);
  };
  async function versions(scriptPath: string): Promise<number> {
    const { rows } = await services.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM script WHERE workspace_id = $1 AND path = $2",
      [WS, scriptPath],
    );
    return rows[0]!.n;
  }

  before(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-cli-"));
    // Jobs run as an unprivileged user in the sandbox: they must be able to reach the caches.
    fs.chmodSync(scratch, 0o755);
    dir = path.join(scratch, "repo");
    fs.mkdirSync(dir);
    const wheels = path.join(scratch, "wheels");
    fs.mkdirSync(wheels);
    buildWheel(
      wheels,
      "millrace-greet",
      "1.0.0",
      "millrace_greet",
      'def greet(n):\n    return "hello " + n\n',
    );
    index = await serveIndex(wheels);

    services = await createTestServices();
    ({ membership } = await createTestMember(services, WS));
    // The migrating team's admin is the instance's superadmin (user add/remove need one).
    await services.db.user.update({
      where: { id: membership.principal.userId },
      data: { isSuperAdmin: true },
    });
    const ctx = { ...services, secrets: createKeyring(KEY) };
    await createFolder(ctx, membership, { name: "demo" });
    const url = new URL(services.database.url);
    await createResource(ctx, membership, {
      path: "f/demo/db",
      resourceType: "postgresql",
      value: {
        host: url.hostname,
        port: Number(url.port || 5432),
        user: decodeURIComponent(url.username),
        password: decodeURIComponent(url.password),
        dbname: url.pathname.slice(1),
        sslmode: "disable",
      },
    });
    token = await createApiToken(services, membership.principal, { label: "wmill" });
    const dev = await createUser(services, { email: "dev@wmill.example", password: "dev-password-1" });
    await services.db.workspaceMember.create({
      data: { workspaceId: WS, userId: dev.id, role: "developer" },
    });
    devToken = await createApiToken(services, principalOf(dev), { label: "wmill dev" });

    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, {
      MILLRACE_SECRET_KEY: KEY,
      BASE_INTERNAL_URL: api.url,
      PIP_INDEX_URL: index.url,
      DEPENDENCY_CACHE_DIR: path.join(scratch, "deps-cache"),
    });
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
    await index?.close();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it("workspace add refuses an unknown workspace without --create, adds the existing one; workspace whoami", async () => {
    const home = path.join(scratch, "home-add");
    fs.mkdirSync(home);
    const remote = `${api.url}/`;
    const refused = await wmill(["workspace", "add", "nope", "nope-ws", remote, "--token", token], {
      flags: false,
      home,
    });
    assert.notEqual(refused.code, 0, refused.output);
    assert.match(refused.output, /Workspace at id nope-ws .* does not exist/);
    // It lists the workspaces the token may use instead.
    assert.match(refused.output, new RegExp(`- ${WS} \\(name: `));

    const added = await ok(["workspace", "add", "main", WS, remote, "--token", token], {
      flags: false,
      home,
    });
    assert.match(added.output, new RegExp(`Added workspace main for ${WS}`));
    const who = await ok(["workspace", "whoami"], { flags: false, home });
    assert.match(who.output, new RegExp(`"username": "${membership.principal.username}"`));
    assert.match(who.output, new RegExp(`"email": "${membership.principal.email}"`));
    assert.match(who.output, /Active: main/);

    // The workspaces the token may use (workspaces/users), and every one for a superadmin.
    const remoteList = await ok(["workspace", "list-remote"], { flags: false, home });
    assert.match(remoteList.output, new RegExp(`${WS}\\s.*${membership.principal.username}`));
    assert.match(remoteList.output, new RegExp(`Logged in as: ${membership.principal.email}`));
    const all = await ok(
      ["workspace", "list-remote", "--as-superadmin", "--base-url", remote, "--token", token],
      { flags: false, home },
    );
    assert.match(all.output, /\(superadmin\)/);
    assert.match(all.output, new RegExp(WS));
  });

  it("workspace add --create makes the workspace (the caller its admin), also for a non-superadmin", async () => {
    const remote = `${api.url}/`;
    for (const [who, id, bearer] of [
      ["admin", "wmill-made", token],
      ["dev", "wmill-dev-made", devToken],
    ] as const) {
      const home = path.join(scratch, `home-create-${who}`);
      fs.mkdirSync(home);
      const run = await ok(["workspace", "add", id, id, remote, "--token", bearer, "--create"], {
        flags: false,
        home,
      });
      assert.match(run.output, new RegExp(`Workspace at id ${id} .* does not exist. Creating`));
      const { rows } = await services.pool.query<{ role: string; email: string }>(
        `SELECT m.role::text AS role, u.email FROM workspace_member m JOIN "user" u ON u.id = m.user_id
          WHERE m.workspace_id = $1`,
        [id],
      );
      assert.deepEqual(
        rows.map((r) => r.role),
        ["admin"],
        `${who}: ${JSON.stringify(rows)}`,
      );
      // Added again (it exists now): nothing is created, the profile is kept.
      const again = await ok(["workspace", "add", id, id, remote, "--token", bearer, "--create"], {
        flags: false,
        home,
      });
      assert.doesNotMatch(again.output, /Creating/);
      assert.match(
        (await ok(["workspace", "whoami"], { flags: false, home })).output,
        new RegExp(`Active: ${id}`),
      );
    }
  });

  it("script push twice: the second push makes no version; script history", async () => {
    write(dir, "f/demo/hello.sh", 'name="$1"\necho "hello $name"\n');
    const first = await ok(["script", "push", "f/demo/hello.sh"]);
    assert.match(first.output, /Script f\/demo\/hello.sh pushed/);
    assert.equal(await versions("f/demo/hello"), 1);
    const second = await ok(["script", "push", "f/demo/hello.sh"]);
    assert.match(second.output, /Script f\/demo\/hello.sh pushed/);
    assert.equal(await versions("f/demo/hello"), 1, second.output);
    // What wmill sends when its own comparison finds a difference: skip_if_noop answers the
    // latest version's hash when nothing would change, and makes no version.
    const latest = JSON.parse((await ok(["script", "get", "f/demo/hello", "--json"])).stdout) as {
      hash: string;
      content: string;
      schema: unknown;
    };
    const create = (skip: boolean) =>
      fetch(`${api.url}/api/w/${WS}/scripts/create${skip ? "?skip_if_noop=true" : ""}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          path: "f/demo/hello",
          content: latest.content,
          language: "bash",
          summary: "",
          description: "",
          parent_hash: latest.hash,
          schema: latest.schema,
        }),
      });
    const skipped = await create(true);
    assert.equal(skipped.status, 201);
    assert.equal(await skipped.text(), latest.hash);
    assert.equal(await versions("f/demo/hello"), 1);
    // An edit is a new version, whose parent is the first.
    write(dir, "f/demo/hello.sh", 'name="$1"\necho "hello, $name"\n');
    await ok(["script", "push", "f/demo/hello.sh"]);
    assert.equal(await versions("f/demo/hello"), 2);
    const history = JSON.parse((await ok(["script", "history", "f/demo/hello", "--json"])).stdout) as {
      script_hash: string;
    }[];
    assert.equal(history.length, 2);
    const { rows } = await services.pool.query<{ hash: string; parent_hash: string | null }>(
      "SELECT hash, parent_hash FROM script WHERE workspace_id = $1 AND path = 'f/demo/hello' ORDER BY created_at",
      [WS],
    );
    assert.deepEqual(
      history.map((h) => h.script_hash),
      [rows[1]!.hash, rows[0]!.hash],
    );
    assert.equal(rows[1]!.parent_hash, rows[0]!.hash);
  });

  it("script run in each of the five languages returns the script's result", async () => {
    write(dir, "f/demo/add.py", "def main(a: int, b: int = 2):\n    return a + b\n");
    write(
      dir,
      "f/demo/shout.bun.ts",
      "export function main(s: string) {\n  return s.toUpperCase() + '!';\n}\n",
    );
    write(dir, "f/demo/twice.deno.ts", "export function main(n: number) {\n  return { twice: n * 2 };\n}\n");
    write(dir, "f/demo/next.pg.sql", "-- $1 n\nSELECT $1::int + 1 AS next;\n");
    for (const file of [
      "f/demo/hello.sh",
      "f/demo/add.py",
      "f/demo/shout.bun.ts",
      "f/demo/twice.deno.ts",
      "f/demo/next.pg.sql",
    ]) {
      await ok(["script", "push", file]);
    }
    const listed = JSON.parse((await ok(["script", "list", "--json"])).stdout) as {
      path: string;
      language: string;
      content: string;
    }[];
    assert.deepEqual(
      listed.map((script) => [script.path, script.language]),
      [
        ["f/demo/add", "python3"],
        ["f/demo/hello", "bash"],
        ["f/demo/next", "postgresql"],
        ["f/demo/shout", "bun"],
        ["f/demo/twice", "deno"],
      ],
    );
    assert.match(listed[0]!.content, /return a \+ b/);
    const run = async (scriptPath: string, args: unknown) =>
      lastJson(await ok(["script", "run", scriptPath, "-d", JSON.stringify(args), "-s"]));
    assert.equal(await run("f/demo/hello", { name: "wmill" }), "hello, wmill");
    assert.equal(await run("f/demo/add", { a: 40 }), 42);
    assert.equal(await run("f/demo/shout", { s: "up" }), "UP!");
    assert.deepEqual(await run("f/demo/twice", { n: 21 }), { twice: 42 });
    assert.deepEqual(await run("f/demo/next", { database: "$res:f/demo/db", n: 41 }), [{ next: 42 }]);
    // Not silent: the job's logs stream, then its result.
    const loud = await ok(["script", "run", "f/demo/add", "-d", '{"a": 1, "b": 1}']);
    assert.match(loud.output, /Job Completed|2/);
  });

  it("script preview runs the local file without deploying it", async () => {
    write(dir, "f/demo/draft.py", "def main(x: int):\n    return {'x': x, 'draft': True}\n");
    const preview = await ok(["script", "preview", "f/demo/draft.py", "-d", '{"x": 7}', "-s"]);
    assert.deepEqual(lastJson(preview), { x: 7, draft: true });
    assert.equal(await versions("f/demo/draft"), 0);
    // A failing preview exits non-zero with the error.
    write(dir, "f/demo/broken.py", "def main():\n    raise ValueError('nope')\n");
    const broken = await wmill(["script", "preview", "f/demo/broken.py", "-s"]);
    assert.notEqual(broken.code, 0);
    assert.match(broken.output, /nope/);
  });

  it("generate-metadata writes each script's schema and lock (a real lock from a dependency job)", async () => {
    const repo = path.join(scratch, "meta");
    fs.mkdirSync(repo);
    write(
      repo,
      "f/demo/greet.py",
      "# requirements:\n#millrace-greet==1.0.0\nimport millrace_greet\n\ndef main(name: str):\n    return millrace_greet.greet(name)\n",
    );
    write(
      repo,
      "f/demo/plain.bun.ts",
      "export function main(count: number, label = 'x') {\n  return label.repeat(count);\n}\n",
    );
    const generated = await ok(["generate-metadata", "--yes"], { cwd: repo });
    assert.match(generated.output, /f\/demo\/greet/);
    // Its upload of the local scripts (scripts/raw_temp/diff and store) is answered.
    assert.doesNotMatch(generated.output, /Failed to upload scripts/);

    const greetMeta = fs.readFileSync(path.join(repo, "f/demo/greet.script.yaml"), "utf8");
    assert.match(greetMeta, /lock: '?!inline f\/demo\/greet\.script\.lock'?/);
    assert.match(greetMeta, /name:\s*\n\s+type: string/m);
    assert.equal(
      fs.readFileSync(path.join(repo, "f/demo/greet.script.lock"), "utf8").trim(),
      "millrace-greet==1.0.0",
    );
    const plainMeta = fs.readFileSync(path.join(repo, "f/demo/plain.script.yaml"), "utf8");
    assert.match(plainMeta, /lock: ["']{2}/);
    assert.match(plainMeta, /count:\s*\n\s+type: number/m);
    assert.equal(fs.existsSync(path.join(repo, "f/demo/plain.script.lock")), false);
    assert.match(fs.readFileSync(path.join(repo, "wmill-lock.yaml"), "utf8"), /f\/demo\/greet/);
    // Nothing is deployed by it.
    assert.equal(await versions("f/demo/greet"), 0);
    // Up to date afterwards: a second run finds nothing to do.
    const again = await ok(["generate-metadata", "--yes"], { cwd: repo });
    assert.doesNotMatch(again.output, /Generating metadata for/);

    // The pushed script runs with its locked package.
    await ok(["script", "push", "f/demo/greet.py"], { cwd: repo });
    assert.equal(
      lastJson(await ok(["script", "run", "f/demo/greet", "-d", '{"name": "lock"}', "-s"], { cwd: repo })),
      "hello lock",
    );
  });

  it("the lookups windmill-client makes: workspaces/users, username_to_email, scripts/exists/p", async () => {
    const get = async (route: string, bearer = devToken) => {
      const response = await fetch(`${api.url}/api${route}`, {
        headers: { authorization: `Bearer ${bearer}` },
      });
      return { status: response.status, body: await response.text() };
    };
    const mine = JSON.parse((await get("/workspaces/users")).body) as {
      email: string;
      workspaces: { id: string; username: string }[];
    };
    assert.equal(mine.email, "dev@wmill.example");
    assert.ok(
      mine.workspaces.some((w) => w.id === WS && w.username === "dev"),
      JSON.stringify(mine),
    );
    assert.deepEqual(await get(`/w/${WS}/users/username_to_email/${membership.principal.username}`), {
      status: 200,
      body: membership.principal.email,
    });
    assert.equal((await get(`/w/${WS}/users/username_to_email/nobody`)).status, 404);
    assert.deepEqual(await get(`/w/${WS}/scripts/exists/p/f/demo/hello`, token), {
      status: 200,
      body: "true",
    });
    assert.deepEqual(await get(`/w/${WS}/scripts/exists/p/f/demo/nothing`, token), {
      status: 200,
      body: "false",
    });
    // A script in a folder the caller may not read does not exist for them.
    assert.deepEqual(await get(`/w/${WS}/scripts/exists/p/f/demo/hello`), { status: 200, body: "false" });
    // Not a member: the workspace does not exist for them.
    assert.equal((await get(`/w/wmill-made/scripts/exists/p/f/demo/hello`)).status, 404);
    assert.equal((await get(`/w/${WS}/scripts/history/p/f/demo/nothing`, token)).status, 404);
    assert.equal((await get(`/w/${WS}/scripts/history/p/f/demo/hello`)).status, 404);
  });

  it("jobs/run/dependencies (waited for), deployment_status, raw/h, list_search, is_owner", async () => {
    const call = async (method: string, route: string, bearer: string, body?: unknown) => {
      const response = await fetch(`${api.url}/api/w/${WS}/${route}`, {
        method,
        headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: await response.text() };
    };
    const lock = (code: string) =>
      call("POST", "jobs/run/dependencies", devToken, {
        raw_scripts: [{ raw_code: code, language: "python3", script_path: "u/dev/deps" }],
        entrypoint: "u/dev/deps",
      });
    assert.deepEqual(await lock("def main():\n    return 1\n"), { status: 201, body: '{"lock":""}' });
    assert.deepEqual(await lock("# requirements:\n#millrace-greet==1.0.0\n\ndef main():\n    return 1\n"), {
      status: 201,
      body: '{"lock":"millrace-greet==1.0.0"}',
    });
    const unknown = await lock("# requirements:\n#millrace-absent==9.9.9\n\ndef main():\n    return 1\n");
    assert.equal(unknown.status, 400, unknown.body);
    assert.match(unknown.body, /raw_scripts: the dependencies could not be resolved/);

    const greet = JSON.parse((await call("GET", "scripts/get/p/f/demo/greet", token)).body) as {
      hash: string;
      content: string;
    };
    assert.deepEqual(
      JSON.parse((await call("GET", `scripts/deployment_status/h/${greet.hash}`, token)).body),
      {
        lock: "millrace-greet==1.0.0",
      },
    );
    assert.deepEqual(await call("GET", `scripts/raw/h/${greet.hash}`, token), {
      status: 200,
      body: greet.content,
    });
    const found = JSON.parse((await call("GET", "scripts/list_search", token)).body) as { path: string }[];
    assert.ok(found.some((f) => f.path === "f/demo/greet"));
    // The developer reads no script of the demo folder.
    assert.deepEqual(await call("GET", "scripts/list_search", devToken), { status: 200, body: "[]" });

    // generate-metadata's upload of local scripts: which differ from the deployed ones.
    const sha = (text: string) => createHash("sha256").update(text).digest("hex");
    const diff = (bearer: string) =>
      call("POST", "scripts/raw_temp/diff", bearer, {
        scripts: { "f/demo/greet": sha(greet.content), "f/demo/hello": "0", "f/demo/none": "0" },
        workspace_deps: [{ path: "dependencies/requirements.in", language: "python3", hash: "0" }],
      });
    assert.deepEqual(JSON.parse((await diff(token)).body), [
      "f/demo/hello",
      "f/demo/none",
      "dependencies/requirements.in",
    ]);
    // What the caller may not read counts as differing (nothing of it is revealed).
    assert.deepEqual(JSON.parse((await diff(devToken)).body), [
      "f/demo/greet",
      "f/demo/hello",
      "f/demo/none",
      "dependencies/requirements.in",
    ]);
    assert.deepEqual(await call("POST", "scripts/raw_temp/store", devToken, "print(1)"), {
      status: 200,
      body: sha("print(1)"),
    });

    assert.equal((await call("GET", "users/is_owner/f/demo/greet", token)).body, "true");
    assert.equal((await call("GET", "users/is_owner/f/demo/greet", devToken)).body, "false");
    assert.equal((await call("GET", "users/is_owner/u/dev/thing", devToken)).body, "true");
    assert.equal(
      (await call("GET", `users/is_owner/u/${membership.principal.username}/x`, devToken)).body,
      "false",
    );
  });

  it("dependencies push stores the workspace's requirements; the same content again stores nothing", async () => {
    write(dir, "dependencies/requirements.in", "requests==2.31.0\n");
    write(dir, "dependencies/etl.requirements.in", "pyyaml==6.0.1\n");
    await ok(["dependencies", "push", "dependencies/requirements.in"]);
    await ok(["dependencies", "push", "dependencies/etl.requirements.in"]);
    const again = await ok(["dependencies", "push", "dependencies/requirements.in"]);
    assert.match(again.output, /up-to-date, skipping push/);
    const latest = (name?: string) =>
      fetch(
        `${api.url}/api/w/${WS}/workspace_dependencies/get_latest/python3${name ? `?name=${name}` : ""}`,
        { headers: { authorization: `Bearer ${token}` } },
      );
    const named = (await (await latest("etl")).json()) as {
      content: string;
      name?: string;
      language: string;
    };
    assert.deepEqual([named.content, named.name, named.language], ["pyyaml==6.0.1\n", "etl", "python3"]);
    assert.equal(((await (await latest()).json()) as { content: string }).content, "requests==2.31.0\n");
    const { rows } = await services.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM workspace_dependencies WHERE workspace_id = $1",
      [WS],
    );
    assert.equal(rows[0]!.n, 2, "one version each: the unchanged push stored nothing");
    assert.equal((await latest("nothing")).status, 404);
  });

  it("user add creates an account, user remove deletes it", async () => {
    const email = "newcomer@wmill.example";
    const added = await ok(["user", "add", email, "newcomer-password-1"]);
    assert.match(added.output, /New User Created/);
    const { rows } = await services.pool.query<{ id: string; username: string }>(
      `SELECT id, username FROM "user" WHERE email = $1`,
      [email],
    );
    assert.equal(rows.length, 1);
    // A member of the workspace, with a folder grant: both go with the account.
    await services.db.workspaceMember.create({
      data: { workspaceId: WS, userId: rows[0]!.id, role: "developer" },
    });
    await services.pool.query(
      "INSERT INTO folder_permission (workspace_id, folder_name, principal, level) VALUES ($1, 'demo', $2, 'viewer')",
      [WS, `u/${rows[0]!.username}`],
    );
    // Only a superadmin deletes accounts, and never their own.
    const del = (who: string, bearer: string) =>
      fetch(`${api.url}/api/users/delete/${encodeURIComponent(who)}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${bearer}` },
      });
    assert.equal((await del(email, devToken)).status, 403);
    const self = await del(membership.principal.email, token);
    assert.equal(self.status, 409, await self.text());
    const removed = await ok(["user", "remove", email]);
    assert.match(removed.output, new RegExp(`Deleted User ${email}`));
    const left = await services.pool.query(
      `SELECT 1 FROM "user" WHERE email = $1
       UNION ALL SELECT 1 FROM folder_permission WHERE principal = $2`,
      [email, `u/${rows[0]!.username}`],
    );
    assert.equal(left.rowCount, 0);
    // Removing it again: wmill fails with the 404.
    const missing = await wmill(["user", "remove", email]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.output, /not found/);
  });
});
