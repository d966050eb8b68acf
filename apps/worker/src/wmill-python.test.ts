// The bundled `wmill` module keeps the names, parameters and defaults of Windmill's Python
// client (PyPI `wmill`) as its documentation gives them, and calls the REST paths of Windmill's
// API: checked with a real python3 against a local HTTP server that records what it is asked.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";

const MODULE_DIR = fileURLToPath(new URL("../clients/python", import.meta.url));

function python(code: string, env: Record<string, string> = {}) {
  const result = spawnSync("/usr/bin/python3", ["-c", code], {
    // No __pycache__ in the repository.
    env: { PATH: "/usr/bin:/bin", PYTHONPATH: MODULE_DIR, PYTHONDONTWRITEBYTECODE: "1", ...env },
    encoding: "utf8",
  });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout;
}

// Windmill's documented signatures of the module-level functions a job uses.
const SIGNATURES: Record<string, string> = {
  get_variable: "(path)",
  set_variable: "(path, value, is_secret=False, description='')",
  get_resource: "(path=None, none_if_undefined=False)",
  set_resource: "(path, value, resource_type='any')",
  get_state: "(path=None)",
  set_state: "(value, path=None)",
  get_state_path: "()",
  run_script:
    "(path=None, hash_=None, args=None, timeout=None, verbose=False, cleanup=True, assert_result_is_not_none=False)",
  run_script_by_path:
    "(path, args=None, timeout=None, verbose=False, cleanup=True, assert_result_is_not_none=False)",
  run_script_by_hash:
    "(hash_, args=None, timeout=None, verbose=False, cleanup=True, assert_result_is_not_none=False)",
  run_script_async: "(path=None, hash_=None, args=None, scheduled_in_secs=None)",
  run_script_by_path_async: "(path, args=None, scheduled_in_secs=None)",
  run_script_by_hash_async: "(hash_, args=None, scheduled_in_secs=None)",
  run_flow_async: "(path, args=None, scheduled_in_secs=None, do_not_track_in_parent=True)",
  wait_job: "(job_id, timeout=None, verbose=False, cleanup=True, assert_result_is_not_none=False)",
  get_result: "(job_id, assert_result_is_not_none=True)",
  get_job: "(job_id)",
  get_job_status: "(job_id)",
  cancel_job: "(job_id, reason=None)",
  cancel_running: "()",
  get_resume_urls: "(approver=None)",
  get_root_job_id: "(job_id=None)",
  get_workspace: "()",
  whoami: "()",
  set_progress: "(value, job_id=None)",
  get_progress: "(job_id=None)",
};

describe("the bundled wmill module", () => {
  it("has Windmill's Python client functions with their parameters", () => {
    const out = python(
      `import inspect, json, wmill\nprint(json.dumps({n: str(inspect.signature(getattr(wmill, n))) for n in ${JSON.stringify(Object.keys(SIGNATURES))}}))`,
    );
    assert.deepEqual(JSON.parse(out), SIGNATURES);
  });

  it("calls Windmill's REST paths with the job's token and workspace", async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        seen.push(`${req.method} ${req.url} ${req.headers.authorization} ${body}`);
        const url = req.url ?? "";
        const reply = (value: unknown) =>
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
        if (url.includes("/jobs/run/"))
          return void res.writeHead(201, { "content-type": "text/plain" }).end("job-1");
        if (url.includes("get_result_maybe"))
          return reply({ completed: true, success: true, result: 42, started: true });
        if (url.includes("/jobs_u/get/")) return reply({ type: "QueuedJob", running: true });
        if (url.includes("/variables/get_value/")) return reply("s3cret");
        if (url.includes("/resources/exists/")) return reply(false);
        reply(null);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const code = `import json, wmill
print(json.dumps([
  wmill.run_script_by_path("f/team/x y", args={"a": 1}),
  wmill.run_script_by_hash_async("abc123", scheduled_in_secs=5),
  wmill.get_job_status("job-1"),
  wmill.get_variable("$var:u/me/v"),
  wmill.set_resource("u/me/r", {"k": 1}, "any"),
]))`;
      // Not spawnSync: it would block the server's event loop.
      const child = spawn("/usr/bin/python3", ["-c", code], {
        env: {
          PATH: "/usr/bin:/bin",
          PYTHONPATH: MODULE_DIR,
          PYTHONDONTWRITEBYTECODE: "1",
          BASE_INTERNAL_URL: base,
          WM_TOKEN: "tok",
          WM_WORKSPACE: "acme",
          WM_JOB_ID: "parent-1",
        },
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
      const status = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      assert.equal(status, 0, err);
      assert.deepEqual(JSON.parse(out), [42, "job-1", "RUNNING", "s3cret", null]);
      assert.deepEqual(seen, [
        'POST /api/w/acme/jobs/run/p/f/team/x%20y?parent_job=parent-1 Bearer tok {"a": 1}',
        "GET /api/w/acme/jobs_u/completed/get_result_maybe/job-1 Bearer tok ",
        "POST /api/w/acme/jobs/run/h/abc123?scheduled_in_secs=5&parent_job=parent-1 Bearer tok {}",
        "GET /api/w/acme/jobs_u/get/job-1 Bearer tok ",
        "GET /api/w/acme/variables/get_value/u/me/v Bearer tok ",
        "GET /api/w/acme/resources/exists/u/me/r Bearer tok ",
        'POST /api/w/acme/resources/create Bearer tok {"path": "u/me/r", "value": {"k": 1}, "resource_type": "any"}',
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
