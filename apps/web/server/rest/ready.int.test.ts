// GET /api/ready, the readiness probe of a server (deploy/helm/millrace and load balancers): served
// by the REST handler with its database behind a TCP proxy that the test cuts and restores, as a
// database failover or a network partition would.
import assert from "node:assert/strict";
import type http from "node:http";
import net from "node:net";
import { after, before, describe, it } from "node:test";
import { READY_RETRY_AFTER_SECS } from "@millrace/core";
import { createTestServices, type TestServices } from "@millrace/core/testing";
import { serveFetchHandler, stopAppServices } from "./testing/node-server.ts";

let services: TestServices;
let server: http.Server;
let base: string;
let proxy: net.Server;
let proxyPort = 0;
const sockets = new Set<net.Socket>();

function startProxy(target: URL): Promise<void> {
  proxy = net.createServer((client) => {
    // The test database may listen on a Unix socket only (`?host=<dir>`).
    const socketDir = target.searchParams.get("host");
    const port = Number(target.port || 5432);
    const upstream = socketDir
      ? net.connect(`${socketDir}/.s.PGSQL.${port}`)
      : net.connect(port, target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  return new Promise<void>((resolve) => proxy.listen(proxyPort, "127.0.0.1", () => resolve())).then(() => {
    proxyPort = (proxy.address() as net.AddressInfo).port;
  });
}

function cutProxy(): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => proxy.close(() => resolve()));
}

async function ready() {
  const response = await fetch(`${base}/api/ready`, { signal: AbortSignal.timeout(10_000) });
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    text: await response.text(),
  };
}

describe("GET /api/ready", () => {
  before(async () => {
    services = await createTestServices();
    const target = new URL(services.database.url);
    await startProxy(target);
    const viaProxy = new URL(services.database.url);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String(proxyPort);
    viaProxy.searchParams.delete("host");
    process.env.DATABASE_URL = viaProxy.toString();
    process.env.MILLRACE_SECRET_KEY = "ready-test-key-0123456789abcdef-0123";
    const { handleRest } = await import("./handler.ts");
    ({ server, url: base } = await serveFetchHandler(handleRest));
  });
  after(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await stopAppServices();
    await cutProxy().catch(() => {});
    await services?.close();
  });

  it("answers 200 while the database answers, 503 with Retry-After while it does not, and recovers", async () => {
    assert.deepEqual(await ready(), { status: 200, retryAfter: null, text: "ready" });

    await cutProxy();
    const down = await ready();
    assert.equal(down.status, 503, down.text);
    assert.equal(down.retryAfter, String(READY_RETRY_AFTER_SECS));
    assert.match(down.text, /database/);
    // Liveness does not depend on the database: a database outage must not restart every server.
    assert.equal((await fetch(`${base}/api/version`)).status, 200);

    await startProxy(new URL(services.database.url));
    let again = await ready();
    for (let i = 0; i < 20 && again.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      again = await ready();
    }
    assert.equal(again.status, 200, again.text);
  });
});
