// Issue 36: a real Prometheus (Debian's `prometheus`, on a loopback port) scrapes a server process
// (its /metrics, with METRICS_TOKEN) and a worker (METRICS_ADDR) while jobs run, and the figures
// are read back through Prometheus's HTTP API. promtool checks both expositions and the alert
// rules shipped in deploy/prometheus.
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { createApiToken, runPreview, type Membership } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { freePort, startTestServer, startTestWorker, type TestServer, type TestWorker } from "./testing.ts";

const KEY = "prometheus-test-instance-key-0123456789ab";
const METRICS_TOKEN = "metrics-token-0123456789abcdef";
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

describe("Prometheus scrapes a server and a worker", () => {
  let services: TestServices;
  let membership: Membership;
  let server: TestServer;
  let worker: TestWorker;
  let prometheus: ChildProcess;
  let prometheusUrl: string;
  let workerMetrics: string;
  let scratch: string;

  async function query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
    const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await response.json()) as { status: string; data: { result: [] } };
    assert.equal(body.status, "success", JSON.stringify(body));
    return body.data.result;
  }

  /** Polls a PromQL expression until `ok` holds for its first value (Prometheus scrapes every second). */
  async function eventually(expr: string, ok: (value: number) => boolean, what: string): Promise<number> {
    const deadline = Date.now() + 45_000;
    let last: unknown = null;
    while (Date.now() < deadline) {
      const result = await query(expr);
      last = result;
      const value = result[0] ? Number(result[0].value[1]) : NaN;
      if (result[0] && ok(value)) return value;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.fail(`${what}: ${expr} never held; last answer ${JSON.stringify(last)}`);
  }

  before(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-prometheus-"));
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "metered"));
    await createApiToken(services, membership.principal, { label: "metrics" });
    server = await startTestServer({
      DATABASE_URL: services.database.url,
      MILLRACE_SECRET_KEY: KEY,
      SERVER_BACKGROUND: "true",
      FLEET_SAMPLE_SECS: "1",
      METRICS_TOKEN,
    });
    const workerPort = await freePort();
    workerMetrics = `127.0.0.1:${workerPort}`;
    worker = await startTestWorker(services.database.url, {
      WORKER_TAGS: "bash",
      WORKER_GROUP: "metered",
      WORKER_PING_INTERVAL: "1",
      METRICS_ADDR: workerMetrics,
      MILLRACE_SECRET_KEY: KEY,
    });
    const prometheusPort = await freePort();
    prometheusUrl = `http://127.0.0.1:${prometheusPort}`;
    fs.writeFileSync(path.join(scratch, "token"), METRICS_TOKEN);
    const config = [
      "global: { scrape_interval: 1s, evaluation_interval: 1s }",
      "scrape_configs:",
      "  - job_name: millrace-server",
      `    authorization: { credentials_file: ${path.join(scratch, "token")} }`,
      `    static_configs: [{ targets: ["${new URL(server.url).host}"] }]`,
      "  - job_name: millrace-worker",
      `    static_configs: [{ targets: ["${workerMetrics}"] }]`,
      "",
    ].join("\n");
    fs.writeFileSync(path.join(scratch, "prometheus.yml"), config);
    prometheus = spawn(
      "prometheus",
      [
        `--config.file=${path.join(scratch, "prometheus.yml")}`,
        `--storage.tsdb.path=${path.join(scratch, "data")}`,
        `--web.listen-address=127.0.0.1:${prometheusPort}`,
      ],
      { stdio: "ignore" },
    );
    const deadline = Date.now() + 30_000;
    while (
      !(await fetch(`${prometheusUrl}/-/ready`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      assert.ok(Date.now() < deadline, "prometheus did not start");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  after(async () => {
    prometheus?.kill("SIGKILL");
    await worker?.stop();
    await server?.stop();
    await services?.close();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it("sees queued jobs on an unserved tag, completions and occupancy", async () => {
    assert.equal((await fetch(`${server.url}/api/version`)).status, 200);
    await eventually('up{job="millrace-server"}', (v) => v === 1, "the server is scraped");
    await eventually('up{job="millrace-worker"}', (v) => v === 1, "the worker is scraped");
    // Two jobs on a tag no worker serves wait; three bash jobs complete, one of them long enough
    // for the worker's occupancy to show.
    for (let i = 0; i < 2; i++) {
      await runPreview(services, membership, {
        language: "bash",
        content: "echo never",
        args: {},
        tag: "unserved",
      });
    }
    for (const content of ["echo 1", "echo 2", "sleep 3; echo 3"]) {
      await runPreview(services, membership, { language: "bash", content, args: {} });
    }
    await eventually('millrace_queue_jobs{tag="unserved"}', (v) => v === 2, "the unserved tag's queue");
    await eventually('millrace_tag_workers_alive{tag="unserved"}', (v) => v === 0, "nobody serves it");
    await eventually('millrace_tag_workers_alive{tag="bash"}', (v) => v === 1, "the worker serves bash");
    await eventually(
      'sum(millrace_jobs_completed_total{tag="bash", status="success"})',
      (v) => v === 3,
      "completions count up",
    );
    await eventually('sum(millrace_jobs_started_total{tag="bash"})', (v) => v === 3, "starts count up");
    await eventually(
      'millrace_worker_occupancy_ratio{group="metered", window="15s"}',
      (v) => v > 0,
      "occupancy moves",
    );
    await eventually('millrace_workers_alive{group="metered"}', (v) => v === 1, "the worker is alive");
    await eventually(
      'sum(millrace_job_duration_seconds_count{tag="bash", language="bash"})',
      (v) => v === 3,
      "durations are observed",
    );
    await eventually(
      "sum(millrace_http_request_duration_seconds_count) >= 0",
      () => true,
      "the server's request histogram is exposed",
    );
    await eventually(
      'millrace_db_pool_connections{job="millrace-worker", state="total"}',
      (v) => v > 0,
      "pools",
    );
  });

  it("passes promtool check metrics on both endpoints, and the shipped rules pass promtool", async () => {
    const endpoints = [
      { url: `${server.url}/metrics`, headers: { authorization: `Bearer ${METRICS_TOKEN}` } },
      { url: `http://${workerMetrics}/metrics`, headers: {} },
    ];
    for (const endpoint of endpoints) {
      const response = await fetch(endpoint.url, { headers: endpoint.headers });
      assert.equal(response.status, 200);
      const exposition = await response.text();
      assert.match(exposition, /millrace_/);
      const check = spawnSync("promtool", ["check", "metrics"], { input: exposition, encoding: "utf8" });
      assert.equal(check.status, 0, `${endpoint.url}: ${check.stdout}${check.stderr}`);
    }
    // The server's port answers only with the token.
    assert.equal((await fetch(`${server.url}/metrics`)).status, 401);
    const rules = path.join(root, "deploy/prometheus");
    execFileSync("promtool", ["check", "rules", path.join(rules, "alerts.yml")], { stdio: "pipe" });
    execFileSync("promtool", ["test", "rules", path.join(rules, "alerts.test.yml")], { stdio: "pipe" });
    execFileSync("promtool", ["check", "config", path.join(rules, "prometheus.yml")], { stdio: "pipe" });
  });
});
