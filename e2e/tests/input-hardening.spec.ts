import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test, type APIRequestContext, type APIResponse } from "@playwright/test";
import pg from "pg";
import { E2E_PG_PORT, E2E_SUPERADMIN_SECRET } from "../instance.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

// Issue 19 (hardening): odd input is refused with a 4xx naming the field, nothing is stored; a
// missing or wrong MILLRACE_SECRET_KEY is a clear 503; error logs never hold what the request
// carried; the job lists take Windmill's schedule_path and label filters and refuse unknown ones.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

function databaseUrl(): string {
  const { password } = JSON.parse(fs.readFileSync(path.join(root, ".data/e2e-pg.json"), "utf8")) as {
    password: string;
  };
  return `postgresql://postgres:${password}@127.0.0.1:${E2E_PG_PORT}/millrace_e2e`;
}

/** Runs SQL on the e2e instance's own database. */
async function sql(text: string, params: unknown[] = []): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** A 400 whose plain-text message starts with `field: `, and whose x-error-field names it. */
async function expectRefused(response: APIResponse, field: string, message: RegExp, what = field) {
  const body = await response.text();
  expect(response.status(), `${what}: ${body}`).toBe(400);
  expect(body.startsWith(`${field}: `), `${what}: ${body}`).toBe(true);
  expect(body).toMatch(message);
  expect(response.headers()["x-error-field"]).toBe(field);
}

const json = { ...superadmin, "content-type": "application/json" };

/** A tRPC call as the UI makes it (no transformer): mutations POST their input, queries GET it. */
function trpc(
  request: APIRequestContext,
  procedure: string,
  input: unknown,
  kind: "mutation" | "query" = "mutation",
  headers: Record<string, string> = superadmin,
): Promise<APIResponse> {
  if (kind === "query") {
    const query = encodeURIComponent(JSON.stringify(input));
    return request.get(`/api/trpc/${procedure}?input=${query}`, { headers });
  }
  // A string is sent as it is: JSON text that Playwright's own serializer could not write.
  if (typeof input === "string")
    return request.post(`/api/trpc/${procedure}`, {
      headers: { ...headers, "content-type": "application/json" },
      data: input,
    });
  return request.post(`/api/trpc/${procedure}`, { headers, data: input });
}

interface TrpcError {
  error: { message: string; data: { httpStatus: number; field?: string; requestId?: string } };
}

async function expectTrpcRefused(response: APIResponse, field: string, message: RegExp) {
  const body = (await response.json()) as TrpcError;
  expect(response.status(), JSON.stringify(body)).toBe(400);
  expect(body.error.data.field).toBe(field);
  expect(body.error.message.startsWith(`${field}: `), body.error.message).toBe(true);
  expect(body.error.message).toMatch(message);
}

test.describe("odd input is refused naming the field, and nothing is stored", () => {
  const workspace = uniqueWorkspace("odd");
  const NUL = /must not contain the NUL character/;

  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
    for (const script of [
      { path: "u/admin/echo", language: "bash", content: 'x="$1"\necho "$x"\n' },
      // An argument of any type, for the deepest nesting allowed.
      { path: "u/admin/any", language: "python3", content: "def main(x):\n    return 1\n" },
    ]) {
      const created = await request.post(`/api/w/${workspace}/scripts/create`, {
        headers: superadmin,
        data: { ...script, summary: "" },
      });
      expect(created.status(), await created.text()).toBe(201);
    }
  });

  test("over REST: NUL, unpaired surrogates, deep nesting and a far-off schedule get a 4xx", async ({
    request,
  }) => {
    const w = `/api/w/${workspace}`;
    await expectRefused(
      await request.post(`${w}/variables/create`, {
        headers: superadmin,
        data: { path: "u/admin/v", value: "a\u0000b", is_secret: false, description: "" },
      }),
      "value",
      NUL,
    );
    await expectRefused(
      await request.post(`${w}/scripts/create`, {
        headers: superadmin,
        data: { path: "u/admin/nul", language: "bash", summary: "", content: "echo a\u0000b\n" },
      }),
      "content",
      NUL,
    );
    await expectRefused(
      await request.post(`${w}/jobs/run/p/u/admin/echo`, { headers: superadmin, data: { x: "a\u0000" } }),
      "args.x",
      NUL,
    );
    await expectRefused(
      await request.post(`${w}/jobs/run/preview`, {
        headers: superadmin,
        data: { language: "bash", content: "echo hi", args: { x: ["ok", "\u0000"] } },
      }),
      "args.x[1]",
      NUL,
    );
    // A body that is not JSON is the `body` argument, and the same rule holds for it.
    await expectRefused(
      await request.post(`${w}/jobs/run/p/u/admin/echo`, {
        headers: { ...superadmin, "content-type": "text/plain" },
        data: "plain\u0000text",
      }),
      "args.body",
      NUL,
    );
    await expectRefused(
      await request.post(`${w}/resources/create`, {
        headers: superadmin,
        data: { path: "u/admin/mail", resource_type: "smtp", value: { "ho\u0000st": "mail", port: 25 } },
      }),
      "value",
      /^value: key "ho\\u0000st" must not contain the NUL character/,
    );
    await expectRefused(
      await request.get(`${w}/jobs/list?script_path_exact=u/admin/a%00b`, { headers: superadmin }),
      "script_path_exact",
      NUL,
    );
    await expectRefused(
      await request.get(`/api/w/${workspace}%00x/jobs/list`, { headers: superadmin }),
      "workspace",
      NUL,
    );
    await expectRefused(
      await request.post(`/api/w/${workspace}%00x/variables/create`, {
        headers: superadmin,
        data: { path: "u/admin/v", value: "x" },
      }),
      "workspace",
      NUL,
    );
    await expectRefused(
      await request.get(`/api/w/%E0%A4%A/jobs/list`, { headers: superadmin }),
      "workspace",
      /malformed percent-encoding/,
    );
    // JSON text as a client sends it: `\ud800` is an escape JSON.parse accepts, alone.
    await expectRefused(
      await request.post(`${w}/jobs/run/p/u/admin/echo`, { headers: json, data: '{"x": "a\\ud800b"}' }),
      "args.x",
      /unpaired surrogate/,
    );
    await expectRefused(
      await request.post(`${w}/variables/create`, {
        headers: json,
        data: '{"path": "u/admin/v", "value": "\\udc00"}',
      }),
      "value",
      /unpaired surrogate/,
    );
    const deep = `{"x": ${"[".repeat(4999)}1${"]".repeat(4999)}}`;
    await expectRefused(
      await request.post(`${w}/jobs/run/p/u/admin/echo`, { headers: json, data: deep }),
      "args.x",
      /nested more than 100 levels deep/,
    );
    await expectRefused(
      await request.post(`${w}/resources/create`, {
        headers: json,
        data: `{"path": "u/admin/deep", "resource_type": "smtp", "value": ${deep}}`,
      }),
      "value",
      /nested more than 100 levels deep/,
    );
    await expectRefused(
      await request.post(`${w}/jobs/run/p/u/admin/echo?scheduled_in_secs=1e308`, {
        headers: superadmin,
        data: {},
      }),
      "scheduled_in_secs",
      /out of range/,
    );
    await expectRefused(
      await request.post(`${w}/jobs/run/p/u/admin/echo?scheduled_in_secs=9000000000000000`, {
        headers: superadmin,
        data: {},
      }),
      "scheduled_in_secs",
      /too far ahead/,
    );
    await expectRefused(
      await request.post(`${w}/jobs/run/p/u/admin/echo?scheduled_for=%2B275000-01-01T00:00:00Z`, {
        headers: superadmin,
        data: {},
      }),
      "scheduled_for",
      /between 0001-01-01 and 9999-12-31/,
    );
    // 100 levels are fine (the limit is documented in docs/api.md).
    const hundred = `{"x": ${"[".repeat(99)}1${"]".repeat(99)}}`;
    const ok = await request.post(`${w}/jobs/run/p/u/admin/any?scheduled_in_secs=3600`, {
      headers: json,
      data: hundred,
    });
    expect(ok.status(), await ok.text()).toBe(201);
    const id = await ok.text();
    await request.post(`${w}/jobs_u/queue/cancel/${id}`, { headers: superadmin, data: { reason: "done" } });

    // Nothing of the refused calls was stored.
    const jobs = (await (await request.get(`${w}/jobs/list`, { headers: superadmin })).json()) as {
      id: string;
    }[];
    expect(jobs.map((job) => job.id)).toEqual([id]);
    expect(await (await request.get(`${w}/variables/list`, { headers: superadmin })).json()).toEqual([]);
    expect(await (await request.get(`${w}/resources/list`, { headers: superadmin })).json()).toEqual([]);
    const scripts = (await (await request.get(`${w}/scripts/list`, { headers: superadmin })).json()) as {
      path: string;
    }[];
    expect(scripts.map((script) => script.path).sort()).toEqual(["u/admin/any", "u/admin/echo"]);
  });

  test("over tRPC (the UI): the same values get a 400 naming the field", async ({ request }) => {
    await expectTrpcRefused(
      await trpc(request, "variable.create", { workspace, path: "u/admin/v", value: "a\u0000b" }),
      "value",
      NUL,
    );
    await expectTrpcRefused(
      await trpc(request, "variable.create", {
        workspace: `${workspace}\u0000`,
        path: "u/admin/v",
        value: "x",
      }),
      "workspace",
      NUL,
    );
    await expectTrpcRefused(
      await trpc(request, "job.runScript", { workspace, path: "u/admin/echo", args: { x: "\ud800" } }),
      "args.x",
      /unpaired surrogate/,
    );
    const deep = `${"[".repeat(5000)}1${"]".repeat(5000)}`;
    await expectTrpcRefused(
      await trpc(
        request,
        "job.runScript",
        `{"workspace": "${workspace}", "path": "u/admin/echo", "args": {"x": ${deep}}}`,
      ),
      "args",
      /nested more than 100 levels deep/,
    );
    await expectTrpcRefused(
      await trpc(request, "job.list", { workspace, script_path_exact: "u/admin/\u0000" }, "query"),
      "script_path_exact",
      NUL,
    );
    expect(
      await (await request.get(`/api/w/${workspace}/variables/list`, { headers: superadmin })).json(),
    ).toEqual([]);
  });
});

test.describe("job lists: schedule_path and label (Windmill's filters), unknown filters refused", () => {
  const workspace = uniqueWorkspace("labels");
  const ids: Record<string, string> = {};

  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
    for (const [scriptPath, content] of [
      ["u/admin/labelled", 'label="$1"\necho "{\\"wm_labels\\": [\\"$label\\", \\"all\\"]}"\n'],
      ["u/admin/plain", 'echo "{\\"rows\\": 1}"\n'],
    ] as const) {
      const created = await request.post(`/api/w/${workspace}/scripts/create`, {
        headers: superadmin,
        data: { path: scriptPath, language: "bash", summary: "", content },
      });
      expect(created.status(), await created.text()).toBe(201);
    }
  });

  async function list(request: APIRequestContext, query: string): Promise<string[]> {
    const response = await request.get(`/api/w/${workspace}/jobs/list?per_page=1000&${query}`, {
      headers: superadmin,
    });
    expect(response.status(), await response.text()).toBe(200);
    return ((await response.json()) as { id: string }[]).map((job) => job.id);
  }

  test("label matches wm_labels in the result; schedule_path the schedule that started the job", async ({
    request,
  }) => {
    for (const [name, scriptPath, args] of [
      ["deploy", "u/admin/labelled", { label: "deploy" }],
      ["release", "u/admin/labelled", { label: "release" }],
      ["plain", "u/admin/plain", {}],
    ] as const) {
      const run = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/${scriptPath}`, {
        headers: superadmin,
        data: args,
      });
      expect(run.status(), await run.text()).toBe(200);
      ids[name] = (await list(request, `script_path_exact=${scriptPath}&per_page=1`))[0]!;
    }
    const result = await request.get(`/api/w/${workspace}/jobs_u/completed/get_result/${ids.deploy}`, {
      headers: superadmin,
    });
    expect(await result.json()).toEqual({ wm_labels: ["deploy", "all"] });

    // A schedule ticking every second until it has started a job, then deleted.
    const schedule = "u/admin/ticker";
    const created = await request.post(`/api/w/${workspace}/schedules/create`, {
      headers: superadmin,
      data: {
        path: schedule,
        schedule: "* * * * * *",
        timezone: "UTC",
        script_path: "u/admin/labelled",
        is_flow: false,
        args: { label: "tick" },
      },
    });
    expect(created.status(), await created.text()).toBe(201);
    await expect
      .poll(async () => (await list(request, "label=tick")).length, { timeout: 30_000 })
      .toBeGreaterThan(0);
    const deleted = await request.delete(`/api/w/${workspace}/schedules/delete/${schedule}`, {
      headers: superadmin,
    });
    expect(deleted.status(), await deleted.text()).toBe(200);
    await expect
      .poll(
        async () =>
          (await list(request, "running=true")).length + (await list(request, "status=queued")).length,
      )
      .toBe(0);

    const all = await list(request, "");
    const manual = [ids.deploy!, ids.release!, ids.plain!];
    const scheduled = all.filter((id) => !manual.includes(id));
    expect(scheduled.length).toBeGreaterThan(0);
    expect(await list(request, `schedule_path=${schedule}`)).toEqual(scheduled);
    expect(await list(request, `schedule_path=!${schedule}`)).toEqual([ids.plain, ids.release, ids.deploy]);
    expect(await list(request, "schedule_path=u/admin/other")).toEqual([]);

    expect(await list(request, "label=deploy")).toEqual([ids.deploy]);
    expect(await list(request, "label=deploy,release")).toEqual([ids.release, ids.deploy]);
    expect(await list(request, "label=tick")).toEqual(scheduled);
    expect(await list(request, "label=all")).toEqual(all.filter((id) => id !== ids.plain));
    expect(await list(request, "label=!all")).toEqual([ids.plain]);
    expect(await list(request, "label=!deploy,!tick")).toEqual([ids.plain, ids.release]);
    expect(await list(request, `label=tick&schedule_path=!${schedule}`)).toEqual([]);
    expect(await list(request, "label=rows")).toEqual([]);
    for (const endpoint of ["jobs/completed/list", "jobs/queue/list"]) {
      const response = await request.get(`/api/w/${workspace}/${endpoint}?label=deploy`, {
        headers: superadmin,
      });
      const listed = ((await response.json()) as { id: string }[]).map((job) => job.id);
      expect(listed).toEqual(endpoint === "jobs/completed/list" ? [ids.deploy] : []);
    }

    // The Runs page (tRPC) takes the same filters.
    const viaTrpc = await trpc(request, "job.list", { workspace, label: "release" }, "query");
    expect(viaTrpc.status(), await viaTrpc.text()).toBe(200);
    const { result: trpcResult } = (await viaTrpc.json()) as { result: { data: { id: string }[] } };
    expect(trpcResult.data.map((job) => job.id)).toEqual([ids.release]);
  });

  test("unknown, unsupported and ill-typed filters get a 400 naming the parameter", async ({ request }) => {
    const cases: [string, string, RegExp][] = [
      ["script_path=u/admin/plain", "script_path", /unknown parameter; the job lists take script_path_exact/],
      ["worker=wk-1", "worker", /this Windmill filter is not supported/],
      ["args=%7B%7D", "args", /this Windmill filter is not supported/],
      ["schedule_path=nightly", "schedule_path", /must look like u\/<user>\/<name>/],
      ["schedule_path=u/admin/a,!u/admin/b", "schedule_path", /prefix either every value with !/],
      [`label=${"x".repeat(300)}`, "label", /at most 255 characters/],
      ["label=!", "label", /! must be followed by a value/],
      ["page=1e308", "page", /whole number/],
    ];
    for (const endpoint of ["jobs/list", "jobs/queue/list", "jobs/completed/list"]) {
      for (const [query, field, message] of cases) {
        await expectRefused(
          await request.get(`/api/w/${workspace}/${endpoint}?${query}`, { headers: superadmin }),
          field,
          message,
          `${endpoint}?${query.slice(0, 40)}`,
        );
      }
    }
    // The credential some clients pass in the query string is no filter.
    const withToken = await request.get(
      `/api/w/${workspace}/jobs/list?token=${encodeURIComponent(E2E_SUPERADMIN_SECRET)}&per_page=1`,
    );
    expect(withToken.status(), await withToken.text()).toBe(200);
  });
});

/**
 * A second server on the e2e database whose output the test reads, started with an instance key
 * other than the one the e2e instance's workspace keys are wrapped with.
 */
interface SecondServer {
  baseURL: string;
  /** Everything the server wrote to stdout and stderr so far. */
  output(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function startSecondServer(env: Record<string, string>): Promise<SecondServer> {
  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  let output = "";
  const child: ChildProcess = spawn(process.execPath, [path.join(root, "apps/web/serve.ts")], {
    cwd: path.join(root, "apps/web"),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? root,
      NODE_ENV: "production",
      NEXT_TELEMETRY_DISABLED: "1",
      DATABASE_URL: databaseUrl(),
      PORT: String(port),
      BASE_URL: baseURL,
      NEXTAUTH_URL: baseURL,
      SUPERADMIN_SECRET: E2E_SUPERADMIN_SECRET,
      ...env,
    },
  });
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      return;
    }
    const killed = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // gone
      }
    }, 10_000);
    await exited;
    clearTimeout(killed);
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the second server exited:\n${output}`);
    const ready = await fetch(`${baseURL}/api/version`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the second server did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { baseURL, output: () => output, stop };
}

/** What the server logged while `action` ran (and shortly after, for late writes). */
async function logged(server: SecondServer, action: () => Promise<void>): Promise<string> {
  const from = server.output().length;
  await action();
  await new Promise((resolve) => setTimeout(resolve, 500));
  return server.output().slice(from);
}

const STACK_FRAME = /^\s+at \S/m;

test.describe("server errors: a clear 503 for the instance key, logs without request values", () => {
  const workspace = uniqueWorkspace("errlog");
  const MARKER = `marker-${randomBytes(6).toString("hex")}`;
  let server: SecondServer;

  test.beforeAll(async ({ request }) => {
    test.setTimeout(180_000);
    await createWorkspace(request, workspace);
    // The workspace's key is created (wrapped by the e2e instance's key) by a first secret.
    const secret = await request.post(`/api/w/${workspace}/variables/create`, {
      headers: superadmin,
      data: { path: "u/admin/first", value: "s3cret", is_secret: true },
    });
    expect(secret.status(), await secret.text()).toBe(201);
    const script = await request.post(`/api/w/${workspace}/scripts/create`, {
      headers: superadmin,
      data: { path: "u/admin/echo", language: "bash", summary: "", content: 'x="$1"\necho "$x"\n' },
    });
    expect(script.status(), await script.text()).toBe(201);
    server = await startSecondServer({ MILLRACE_SECRET_KEY: randomBytes(32).toString("base64url") });
  });

  test.afterAll(async () => {
    await server?.stop();
  });

  test("a secret with the wrong MILLRACE_SECRET_KEY answers 503 naming it, one log line, no stack", async ({
    playwright,
  }) => {
    const api = await playwright.request.newContext({ baseURL: server.baseURL });
    try {
      let rest: APIResponse | undefined;
      let ui: APIResponse | undefined;
      const log = await logged(server, async () => {
        rest = await api.post(`/api/w/${workspace}/variables/create`, {
          headers: superadmin,
          data: { path: "u/admin/second", value: MARKER, is_secret: true },
        });
        ui = await trpc(api, "variable.create", {
          workspace,
          path: "u/admin/third",
          value: MARKER,
          isSecret: true,
        });
      });
      const restText = await rest!.text();
      expect(rest!.status(), restText).toBe(503);
      expect(restText).toContain("MILLRACE_SECRET_KEY");
      expect(rest!.headers()["x-error-field"]).toBe("MILLRACE_SECRET_KEY");
      const uiError = (await ui!.json()) as TrpcError;
      expect(ui!.status(), JSON.stringify(uiError)).toBe(503);
      expect(uiError.error.message).toContain("MILLRACE_SECRET_KEY");

      expect(log).toContain("secrets: ");
      expect(log).toContain("MILLRACE_SECRET_KEY");
      expect(log).not.toMatch(STACK_FRAME);
      expect(log).not.toContain(MARKER);
      const exists = await api.get(`/api/w/${workspace}/variables/list`, { headers: superadmin });
      expect(((await exists.json()) as { path: string }[]).map((v) => v.path)).toEqual(["u/admin/first"]);
    } finally {
      await api.dispose();
    }
  });

  test("a 500 logs its class, route and request id, never the arguments or code it failed on", async ({
    playwright,
  }) => {
    if (!/^[a-z0-9-]+$/.test(workspace)) throw new Error(`unexpected workspace id ${workspace}`);
    // Fault injection: the database refuses this workspace's new rows with an error that quotes
    // them, as constraint and type errors quote the values they refuse.
    await sql(`CREATE OR REPLACE FUNCTION e2e_hardening_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test: %', row_to_json(NEW)::text; END $$`);
    for (const table of ["variable", "job", "script"]) {
      await sql(`CREATE TRIGGER e2e_hardening_refuse BEFORE INSERT ON "${table}" FOR EACH ROW
        WHEN (NEW.workspace_id = '${workspace}') EXECUTE FUNCTION e2e_hardening_refuse()`);
    }
    const api = await playwright.request.newContext({ baseURL: server.baseURL });
    try {
      const responses: [string, APIResponse][] = [];
      const log = await logged(server, async () => {
        responses.push([
          "POST /api/w/:workspace/variables/create",
          await api.post(`/api/w/${workspace}/variables/create`, {
            headers: superadmin,
            data: { path: "u/admin/plain", value: MARKER },
          }),
        ]);
        responses.push([
          "POST /api/w/:workspace/jobs/run/p/*path",
          await api.post(`/api/w/${workspace}/jobs/run/p/u/admin/echo`, {
            headers: superadmin,
            data: { x: MARKER },
          }),
        ]);
        responses.push([
          "POST /api/w/:workspace/scripts/create",
          await api.post(`/api/w/${workspace}/scripts/create`, {
            headers: superadmin,
            data: { path: "u/admin/code", language: "bash", summary: "", content: `echo ${MARKER}\n` },
          }),
        ]);
        responses.push([
          "trpc variable.create",
          await trpc(api, "variable.create", { workspace, path: "u/admin/ui", value: MARKER }),
        ]);
      });
      for (const [route, response] of responses) {
        const body = await response.text();
        expect(response.status(), `${route}: ${body}`).toBe(500);
        expect(body).not.toContain(MARKER);
        const id = /request ([0-9a-f]{12})/.exec(body)?.[1];
        expect(id, body).toBeTruthy();
        expect(log).toContain(`internal error on ${route} (request ${id})`);
      }
      expect(log).not.toContain(MARKER);
      expect(log).not.toContain("refused by the test");
    } finally {
      await api.dispose();
      for (const table of ["variable", "job", "script"])
        await sql(`DROP TRIGGER IF EXISTS e2e_hardening_refuse ON "${table}"`);
      await sql("DROP FUNCTION IF EXISTS e2e_hardening_refuse()");
    }
  });
});
