// The autoscaler's pass over real PostgreSQL, fed fleet samples as the sampler stores them: what it
// records (state, event, audit log) for the `script` and `kubernetes` integrations, a failed apply
// recorded and retried, the cooldown, a group whose autoscaling is off left alone, and who may
// read the decisions.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Principal } from "../auth/principal.ts";
import type { FleetSample } from "../fleet/sample.ts";
import { metricsExposition } from "../metrics/registry.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import { updateWorkerGroupConfig } from "../workers/group-config.ts";
import { deployScript } from "../scripts.ts";
import { ADMINS_WORKSPACE, ensureAdminsWorkspace, requireMembership } from "../workspaces.ts";
import { listAutoscaling, listAutoscalingEvents } from "./list.ts";
import { runAutoscaler } from "./run.ts";

const sample = (queues: Record<string, number>, groups: FleetSample["groups"] = []): FleetSample => ({
  at: new Date(),
  queues: Object.entries(queues).map(([tag, queued]) => ({
    tag,
    queued,
    scheduled: 0,
    running: 0,
    oldestWaitSecs: 1,
    workers: 0,
  })),
  groups,
});

describe("runAutoscaler", () => {
  let services: TestServices;
  let superadmin: Principal;
  let member: Principal;
  let api: http.Server;
  let dir: string;
  let apiFails = false;
  const patches: { url: string; body: unknown }[] = [];
  const logs: string[] = [];
  const log = (message: string) => logs.push(message);

  before(async () => {
    services = await createTestServices();
    ({ principal: member } = await createTestMember(services, "scaling"));
    superadmin = { ...member, isSuperAdmin: true };
    api = http.createServer((req, res) => {
      let text = "";
      req.on("data", (chunk: Buffer) => (text += chunk.toString()));
      req.on("end", () => {
        res.setHeader("content-type", "application/json");
        if (apiFails) {
          res.statusCode = 503;
          return res.end(JSON.stringify({ kind: "Status", message: "etcd is down", code: 503 }));
        }
        const body = JSON.parse(text) as { spec: { replicas: number } };
        patches.push({ url: `${req.method} ${req.url}`, body });
        res.end(JSON.stringify({ kind: "Scale", spec: body.spec }));
      });
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-autoscaler-"));
    fs.writeFileSync(
      path.join(dir, "kubeconfig"),
      JSON.stringify({
        "current-context": "c",
        contexts: [{ name: "c", context: { cluster: "k", user: "u", namespace: "millrace" } }],
        clusters: [
          { name: "k", cluster: { server: `http://127.0.0.1:${(api.address() as AddressInfo).port}` } },
        ],
        users: [{ name: "u", user: { token: "t" } }],
      }),
    );
    fs.writeFileSync(path.join(dir, "scale.sh"), `#!/bin/bash\necho "$1 $2 $4" >> ${dir}/calls\n`, {
      mode: 0o755,
    });
  });
  after(async () => {
    await new Promise((resolve) => api?.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
    await services?.close();
  });

  const events = async (group: string) =>
    (
      await services.pool.query<{
        from_workers: number;
        to_workers: number;
        event_type: string;
        error: string | null;
      }>(
        "SELECT from_workers, to_workers, event_type, error FROM autoscaling_event WHERE worker_group = $1 ORDER BY id",
        [group],
      )
    ).rows.map((row) => [row.event_type, row.from_workers, row.to_workers, row.error]);
  const state = async (group: string) =>
    (
      await services.pool.query<{ desired: number; error: string | null }>(
        "SELECT desired, error FROM autoscaling_state WHERE worker_group = $1",
        [group],
      )
    ).rows[0];

  it("scales a Deployment through the API, records why, and retries an apply that failed", async () => {
    await updateWorkerGroupConfig(services, superadmin, "gpu", {
      worker_tags: ["gpu"],
      autoscaling: {
        enabled: true,
        min_workers: 1,
        max_workers: 4,
        cooldown_seconds: 0,
        integration: { type: "kubernetes", kubeconfig: path.join(dir, "kubeconfig") },
      },
    });
    // Below min_workers (no worker yet): up to 1 at once.
    await runAutoscaler(services, log, sample({}));
    assert.deepEqual(await events("gpu"), [["bounds", 0, 1, null]]);
    assert.deepEqual(patches.at(-1), {
      url: "PATCH /apis/apps/v1/namespaces/millrace/deployments/millrace-worker-gpu/scale",
      body: { spec: { replicas: 1 } },
    });

    // 5 jobs wait, the one worker runs one: 4 more would be needed, max_workers caps at 4.
    apiFails = true;
    const busy = [
      { workerGroup: "gpu", alive: 1, busy: 1, occupancy15s: 1, occupancy5m: 0.9, occupancy30m: 0.5 },
    ];
    const [decision] = await runAutoscaler(services, log, sample({ gpu: 5, bash: 7 }, busy));
    assert.equal(decision?.to, 4);
    assert.match(decision!.reason, /^5 job\(s\) waiting for 0 idle worker\(s\)/);
    assert.match(decision!.error ?? "", /answered 503: etcd is down/);
    assert.deepEqual(await state("gpu"), { desired: 4, error: decision!.error });
    assert.match(logs.join("\n"), /kubernetes integration failed for gpu/);

    // Nothing new to decide: the failed apply is tried again, and succeeds.
    apiFails = false;
    const four = [{ ...busy[0]!, alive: 4, busy: 4 }];
    assert.deepEqual(await runAutoscaler(services, log, sample({}, four)), []);
    assert.deepEqual(patches.at(-1)?.body, { spec: { replicas: 4 } });
    assert.deepEqual(await state("gpu"), { desired: 4, error: null });

    const audit = await services.pool.query<{
      operation: string;
      parameters: { from: number; to: number; reason: string };
    }>(
      "SELECT operation, parameters FROM audit_log WHERE resource = 'worker__gpu' AND operation LIKE 'autoscaling.%' ORDER BY id",
    );
    assert.deepEqual(
      audit.rows.map((row) => [row.operation, row.parameters.from, row.parameters.to]),
      [
        ["autoscaling.bounds", 0, 1],
        ["autoscaling.scale_out", 1, 4],
      ],
    );
  });

  it("runs the script integration's command within the cooldown rules, and leaves disabled groups alone", async () => {
    await updateWorkerGroupConfig(services, superadmin, "etl", {
      worker_tags: ["etl"],
      autoscaling: {
        enabled: true,
        min_workers: 0,
        max_workers: 2,
        cooldown_seconds: 3600,
        integration: { type: "script", command: [path.join(dir, "scale.sh")] },
      },
    });
    await updateWorkerGroupConfig(services, superadmin, "manual", {
      worker_tags: ["manual"],
      autoscaling: { enabled: false, min_workers: 0, max_workers: 2, integration: { type: "local" } },
    });
    await runAutoscaler(services, log, sample({ etl: 1, manual: 9 }));
    const etl = [{ workerGroup: "etl", alive: 1, busy: 1, occupancy15s: 1, occupancy5m: 1, occupancy30m: 1 }];
    // Within the hour's cooldown: still one worker however busy it is.
    await runAutoscaler(services, log, sample({ etl: 3 }, etl));
    assert.deepEqual(await events("etl"), [["scale_out", 0, 1, null]]);
    assert.equal(fs.readFileSync(path.join(dir, "calls"), "utf8"), "etl 1 scale_out\n");
    assert.deepEqual(await events("manual"), []);
    assert.equal(await state("manual"), undefined);
  });

  it("runs a script of the admins workspace with Windmill's arguments and tag", async () => {
    // The admins workspace is made by the launcher and only superadmins enter it: a superadmin
    // deploys the script, which then runs as them.
    await ensureAdminsWorkspace(services);
    const { principal } = await createTestMember(services);
    await services.db.user.update({ where: { id: principal.userId }, data: { isSuperAdmin: true } });
    const admin = await requireMembership(services, { ...principal, isSuperAdmin: true }, ADMINS_WORKSPACE);
    await deployScript(services, admin, {
      path: "f/ops/scale",
      language: "bash",
      content:
        'worker_group="$1"\ndesired_workers="$2"\nreason="$3"\nevent_type="$4"\necho "$worker_group $desired_workers"',
    });
    await updateWorkerGroupConfig(services, superadmin, "nomad", {
      worker_tags: ["nomad"],
      autoscaling: {
        enabled: true,
        min_workers: 2,
        max_workers: 5,
        integration: { type: "script", path: "f/ops/scale", tag: "ops" },
      },
    });
    const decisions = await runAutoscaler(services, log, sample({}));
    assert.deepEqual(
      decisions.filter((d) => d.group === "nomad").map((d) => [d.eventType, d.from, d.to, d.error]),
      [["bounds", 0, 2, null]],
    );
    const { rows } = await services.pool.query<{ tag: string; args: Record<string, unknown> }>(
      "SELECT tag, args FROM job WHERE workspace_id = $1 AND script_path = 'f/ops/scale'",
      [ADMINS_WORKSPACE],
    );
    // A bash script's arguments are strings: its inferred schema makes them so.
    assert.deepEqual(rows, [
      {
        tag: "ops",
        args: {
          worker_group: "nomad",
          desired_workers: "2",
          reason: "below min_workers (2)",
          event_type: "bounds",
        },
      },
    ]);
    await updateWorkerGroupConfig(services, superadmin, "nomad", { worker_tags: ["nomad"] });
  });

  it("shows the decisions to superadmins only", async () => {
    const { groups, events: recent } = await listAutoscaling(services, superadmin);
    // The passes of the previous test saw no gpu worker and no gpu job: idle, back to min_workers.
    assert.deepEqual(
      groups.map((g) => [g.group, g.desired]),
      [
        ["etl", 1],
        ["gpu", 1],
        ["nomad", 2],
      ],
    );
    assert.deepEqual(
      recent.map((e) => [e.group, e.from, e.to]),
      [
        ["nomad", 0, 2],
        ["gpu", 4, 1],
        ["etl", 0, 1],
        ["gpu", 1, 4],
        ["gpu", 0, 1],
      ],
    );
    await rejectsWith(listAutoscaling(services, member), "FORBIDDEN");

    // Windmill's list_autoscaling_events shape, one group, a page at a time.
    const page = await listAutoscalingEvents(services, superadmin, "gpu", { page: 1, perPage: 2 });
    assert.deepEqual(
      page.map((e) => [e.worker_group, e.event_type, e.desired_workers]),
      [
        ["gpu", "scale_in", 1],
        ["gpu", "scale_out", 4],
      ],
    );
    assert.match(page[0]!.applied_at, /^\d{4}-\d\d-\d\dT/);
    const second = await listAutoscalingEvents(services, superadmin, "gpu", { page: 2, perPage: 2 });
    assert.deepEqual(
      second.map((e) => e.event_type),
      ["bounds"],
    );
    await rejectsWith(listAutoscalingEvents(services, member, "gpu"), "FORBIDDEN");
    await rejectsWith(
      listAutoscalingEvents(services, superadmin, "no/such"),
      "INVALID_INPUT",
      "worker_group",
    );
  });

  it("counts the decisions in this process's metrics, in an exposition promtool accepts", async () => {
    const { body } = await metricsExposition();
    assert.match(body, /^millrace_autoscaling_decisions_total\{group="gpu",event_type="scale_out"\} 1$/m);
    assert.match(body, /^millrace_autoscaling_decisions_total\{group="gpu",event_type="bounds"\} 1$/m);
    assert.match(body, /^millrace_autoscaling_desired_workers\{group="gpu"\} 1$/m);
    assert.match(body, /^millrace_autoscaling_waiting_jobs\{group="etl"\} 0$/m);
    const check = spawnSync("promtool", ["check", "metrics"], { input: body, encoding: "utf8" });
    assert.equal(check.status, 0, check.stdout + check.stderr);
  });
});
