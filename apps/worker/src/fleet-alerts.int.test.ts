// Issue 36 item 3: the instance's own alerts. A server process leads (fleet sampler every second);
// a worker killed without a word raises worker_offline once (audit log, webhook), and clears it
// with a recovery when it comes back; a worker stopped on purpose raises nothing; a tag whose due
// jobs nobody serves raises tag_unserved. Settings are saved through core, naming a bad field.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  getAlertSettings,
  listInstanceAlerts,
  runPreview,
  saveAlertSettings,
  type Membership,
  type Principal,
} from "@millrace/core";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "@millrace/core/testing";
import { startTestServer, startTestWorker, type TestServer, type TestWorker } from "./testing.ts";

const KEY = "fleet-alerts-test-key-0123456789abcdef";

describe("the instance's alerts", () => {
  let services: TestServices;
  let membership: Membership;
  let superadmin: Principal;
  let server: TestServer;
  let hook: http.Server;
  const received: { status: string; kind: string; subject: string; text: string }[] = [];
  const workers: TestWorker[] = [];

  const startWorker = async () => {
    const worker = await startTestWorker(services.database.url, {
      WORKER_TAGS: "bash",
      WORKER_NAME_PREFIX: "watched",
      WORKER_PING_INTERVAL: "1",
    });
    workers.push(worker);
    return worker;
  };

  async function until<T>(
    what: string,
    read: () => Promise<T | null | undefined | false>,
    ms = 30_000,
  ): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await read();
      if (value) return value;
      assert.ok(Date.now() < deadline, `${what}: not within ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  const auditCount = async (operation: string, resource: string) =>
    Number(
      (
        await services.pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM audit_log WHERE operation = $1 AND resource = $2",
          [operation, resource],
        )
      ).rows[0]!.n,
    );

  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "alerted"));
    superadmin = { ...membership.principal, isSuperAdmin: true };
    hook = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        received.push(JSON.parse(body));
        res.end("ok");
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
    await saveAlertSettings(services, superadmin, {
      webhookUrl: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/alerts`,
      script: null,
      queueWaitSecs: 3600,
      workerOfflineSecs: 3,
    });
    server = await startTestServer({
      DATABASE_URL: services.database.url,
      MILLRACE_SECRET_KEY: KEY,
      SERVER_BACKGROUND: "true",
      FLEET_SAMPLE_SECS: "1",
    });
  });
  after(async () => {
    for (const worker of workers) await worker.stop(2000);
    await server?.stop();
    await new Promise((resolve) => hook?.close(resolve));
    await services?.close();
  });

  it("checks every setting before saving any, naming the field", async () => {
    await rejectsWith(
      saveAlertSettings(services, superadmin, {
        webhookUrl: "ftp://example.com",
        script: null,
        queueWaitSecs: 10,
        workerOfflineSecs: 3,
      }),
      "INVALID_INPUT",
      "webhookUrl",
    );
    await rejectsWith(
      saveAlertSettings(services, superadmin, {
        webhookUrl: null,
        script: null,
        queueWaitSecs: { "*": 60, gpu: -1 },
        workerOfflineSecs: 3,
      }),
      "INVALID_INPUT",
      "queueWaitSecs.gpu",
    );
    await rejectsWith(getAlertSettings(services, membership.principal), "FORBIDDEN");
    const kept = await getAlertSettings(services, superadmin);
    assert.equal(kept.queueWaitSecs, 3600, "nothing was written by the refused saves");
    assert.match(kept.webhookUrl ?? "", /^http:\/\/127\.0\.0\.1:\d+\/alerts$/);
  });

  it("a worker that goes silent is alerted once, and recovers when it returns", async () => {
    const worker = await startWorker();
    await until(
      "the worker pings",
      async () =>
        (await services.pool.query("SELECT 1 FROM worker_ping WHERE name LIKE 'watched%'")).rowCount,
    );
    await worker.kill9();
    const raised = await until("the offline alert", async () =>
      received.find((event) => event.kind === "worker_offline" && event.status === "raised"),
    );
    assert.match(raised.text, /^Millrace alert: worker watched\S* .*has not pinged for \d+ s/);
    // Several more samples pass: still raised once.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    assert.equal(received.filter((event) => event.kind === "worker_offline").length, 1);
    assert.equal(await auditCount("alerts.raised", `worker_offline:${raised.subject}`), 1);
    const open = await listInstanceAlerts(services, superadmin);
    assert.deepEqual(
      open.open.map((alert) => [alert.kind, alert.subject]),
      [["worker_offline", raised.subject]],
    );
    await rejectsWith(listInstanceAlerts(services, membership.principal), "FORBIDDEN");

    const back = await startWorker();
    const recovered = await until("the recovery", async () =>
      received.find((event) => event.kind === "worker_offline" && event.status === "recovered"),
    );
    assert.equal(recovered.subject, raised.subject);
    assert.equal(await auditCount("alerts.recovered", `worker_offline:${raised.subject}`), 1);
    assert.deepEqual((await listInstanceAlerts(services, superadmin)).open, []);

    // Stopping on purpose (SIGTERM) leaves the list at once: nothing is raised.
    const before = received.length;
    await back.stop();
    await new Promise((resolve) => setTimeout(resolve, 6000));
    assert.deepEqual(received.slice(before), []);
  });

  it("a tag whose due jobs nobody serves is alerted", async () => {
    await runPreview(services, membership, {
      language: "bash",
      content: "echo nobody",
      args: {},
      tag: "orphaned",
    });
    const raised = await until("the unserved tag's alert", async () =>
      received.find((event) => event.kind === "tag_unserved" && event.subject === "orphaned"),
    );
    assert.equal(raised.status, "raised");
    assert.match(raised.text, /1 job\(s\) on tag orphaned wait and no live worker serves it/);
  });
});
