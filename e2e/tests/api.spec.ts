import { expect, test } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { completedJob, createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

const SCRIPTS = [
  {
    path: "u/admin/greet_bash",
    language: "bash",
    content: 'name="$1"\ntimes="$2"\necho "hello $name x$times"\n',
  },
  {
    path: "u/admin/greet_py",
    language: "python3",
    content:
      'def main(name: str, times: int = 1):\n    return {"greeting": f"hello {name}", "times": times}\n',
  },
  {
    path: "u/admin/greet_bun",
    language: "bun",
    content:
      "export async function main(name: string, times: number) {\n  return { greeting: `hello ${name}`, times };\n}\n",
  },
];

test.describe("REST API (Windmill-shaped)", () => {
  const workspace = uniqueWorkspace("api");

  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
  });

  test("version answers as text", async ({ request }) => {
    const response = await request.get("/api/version");
    expect(response.status()).toBe(200);
    expect(await response.text()).toMatch(/^Millrace v\d+\.\d+\.\d+/);
  });

  test("bash, python3 and bun scripts return their results through run_wait_result", async ({ request }) => {
    for (const script of SCRIPTS) {
      const created = await request.post(`/api/w/${workspace}/scripts/create`, {
        headers: superadmin,
        data: { ...script, summary: script.path, description: "" },
      });
      expect(created.status(), await created.text()).toBe(201);
      expect(await created.text()).toMatch(/^[0-9a-f]{16}$/);
    }
    const bash = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/u/admin/greet_bash`, {
      headers: superadmin,
      data: { name: "ada", times: "2" },
    });
    expect(await bash.json()).toBe("hello ada x2");
    const python = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/u/admin/greet_py`, {
      headers: superadmin,
      data: { name: "bob", times: 3 },
    });
    expect(await python.json()).toEqual({ greeting: "hello bob", times: 3 });
    const bun = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/u/admin/greet_bun`, {
      headers: superadmin,
      data: { name: "cy", times: 4 },
    });
    expect(await bun.json()).toEqual({ greeting: "hello cy", times: 4 });

    const script = await request.get(`/api/w/${workspace}/scripts/get/p/u/admin/greet_py`, {
      headers: superadmin,
    });
    const body = await script.json();
    expect(body).toMatchObject({
      path: "u/admin/greet_py",
      language: "python3",
      summary: "u/admin/greet_py",
    });
    expect(body.schema.order).toEqual(["name", "times"]);
    const list = await request.get(`/api/w/${workspace}/scripts/list`, { headers: superadmin });
    expect((await list.json()).map((s: { path: string }) => s.path)).toEqual(
      SCRIPTS.map((s) => s.path).sort(),
    );
  });

  test("async run, job status and result", async ({ request }) => {
    const run = await request.post(`/api/w/${workspace}/jobs/run/p/u/admin/greet_bash`, {
      headers: superadmin,
      data: { name: "async", times: "1" },
    });
    expect(run.status()).toBe(201);
    const id = await run.text();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const job = await completedJob(request, workspace, id);
    expect(job).toMatchObject({
      id,
      success: true,
      script_path: "u/admin/greet_bash",
      tag: "bash",
      job_kind: "script",
    });
    expect(job.logs).toContain("hello async x1");
    const result = await request.get(`/api/w/${workspace}/jobs_u/completed/get_result/${id}`, {
      headers: superadmin,
    });
    expect(await result.json()).toBe("hello async x1");
  });

  test("a script that prints its environment shows nothing of the worker's", async ({ request }) => {
    await request.post(`/api/w/${workspace}/scripts/create`, {
      headers: superadmin,
      data: { path: "u/admin/printenv", language: "bash", summary: "", content: "env\necho end\n" },
    });
    const run = await request.post(`/api/w/${workspace}/jobs/run/p/u/admin/printenv`, {
      headers: superadmin,
      data: {},
    });
    const id = await run.text();
    await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/u/admin/printenv`, {
      headers: superadmin,
      data: {},
    });
    const job = await completedJob(request, workspace, id);
    expect(job.logs).toContain("WM_JOB_ID=");
    expect(job.logs).not.toContain("DATABASE_URL");
    expect(job.logs).not.toContain("worker-only-secret");
    expect(job.logs).not.toContain("SUPERADMIN_SECRET");
  });

  test("bad input gets a 4xx naming the problem and stores nothing", async ({ request }) => {
    const cases = [
      {
        data: { path: "scripts/x", language: "bash", content: "echo", summary: "" },
        status: 400,
        text: /^path:/,
      },
      {
        data: { path: "u/admin/../x", language: "bash", content: "echo", summary: "" },
        status: 400,
        text: /^path:/,
      },
      {
        data: { path: "u/admin/x", language: "cobol", content: "echo", summary: "" },
        status: 400,
        text: /^language:/,
      },
      {
        data: {
          path: "u/admin/x",
          language: "bun",
          content: "export function main(a: string {",
          summary: "",
        },
        status: 400,
        text: /^content:/,
      },
    ];
    for (const { data, status, text } of cases) {
      const response = await request.post(`/api/w/${workspace}/scripts/create`, {
        headers: superadmin,
        data,
      });
      expect(response.status()).toBe(status);
      expect(await response.text()).toMatch(text);
    }
    const missing = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/u/admin/missing`, {
      headers: superadmin,
      data: {},
    });
    expect(missing.status()).toBe(404);
    expect(await missing.text()).toContain("u/admin/missing");
    const badArgs = await request.post(`/api/w/${workspace}/jobs/run/p/u/admin/greet_py`, {
      headers: superadmin,
      data: { times: 2 },
    });
    expect(badArgs.status()).toBe(400);
    expect(await badArgs.text()).toMatch(/^args\.name:/);
    const list = await request.get(`/api/w/${workspace}/scripts/list`, { headers: superadmin });
    expect((await list.json()).some((s: { path: string }) => s.path === "u/admin/x")).toBe(false);
  });

  test("a main that throws gives a failed job with the error", async ({ request }) => {
    await request.post(`/api/w/${workspace}/scripts/create`, {
      headers: superadmin,
      data: {
        path: "u/admin/thrower",
        language: "bun",
        summary: "",
        content: 'export async function main() {\n  throw new TypeError("no way");\n}\n',
      },
    });
    const response = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/u/admin/thrower`, {
      headers: superadmin,
      data: {},
    });
    expect(response.status()).toBe(500);
    expect((await response.json()).error).toMatchObject({ name: "TypeError", message: "no way" });
  });

  test("login, API tokens and workspace isolation", async ({ request, playwright, baseURL }) => {
    const login = await request.post("/api/auth/login", { data: E2E_ADMIN });
    expect(login.status()).toBe(200);
    const session = await login.text();
    const created = await request.post("/api/users/tokens/create", {
      headers: { Authorization: `Bearer ${session}` },
      data: { label: "ci" },
    });
    expect(created.status()).toBe(201);
    const token = await created.text();
    const auth = { Authorization: `Bearer ${token}` };
    const own = uniqueWorkspace("own");
    await createWorkspace(request, own, auth);
    const listed = await (await request.get("/api/workspaces/list", { headers: auth })).json();
    expect(listed.map((w: { id: string }) => w.id)).toContain(own);

    // A fresh context: `request` now holds the `token` cookie that login set.
    const anonymous = await playwright.request.newContext({ baseURL });
    expect((await anonymous.get("/api/workspaces/list")).status()).toBe(401);
    const bogus = await anonymous.get("/api/workspaces/list", { headers: { Authorization: "Bearer nope" } });
    expect(bogus.status()).toBe(401);
    await anonymous.dispose();
    const wrong = await request.post("/api/auth/login", {
      data: { email: E2E_ADMIN.email, password: "wrong-password" },
    });
    expect(wrong.status()).toBe(401);
  });
});
