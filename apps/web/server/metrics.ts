// This server's Prometheus metrics: the fleet's figures (registerFleetMetrics), its database pool,
// and its REST requests (timed by the router). See docs/operations.md, "Metrics and alerts".
import { timingSafeEqual } from "node:crypto";
import {
  metricsExposition,
  registerFleetMetrics,
  startMetricsListener,
  watchDatabasePool,
} from "@millrace/core";
import { serverEnv } from "./env.ts";
import { getServices } from "./services.ts";

/** Registers the server's metrics and, with METRICS_ADDR, serves them on their own address. */
export async function startServerMetrics(): Promise<void> {
  const services = await getServices();
  registerFleetMetrics(services.pool);
  watchDatabasePool(services.pool);
  const address = serverEnv().METRICS_ADDR;
  if (address) {
    await startMetricsListener(address);
    console.log(`metrics on http://${address.host}:${address.port}/metrics`);
  }
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header?.replace(/^Bearer\s+/i, "") ?? "");
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** GET /metrics on the server's own port: with METRICS_TOKEN as a bearer token only. */
export async function metricsResponse(authorization: string | null | undefined): Promise<Response> {
  const token = serverEnv().METRICS_TOKEN;
  if (!token) {
    return new Response(
      "metrics are off on this port: set METRICS_TOKEN (then scrape with it as a bearer token) or METRICS_ADDR\n",
      { status: 404, headers: { "content-type": "text/plain" } },
    );
  }
  if (!tokenMatches(authorization ?? undefined, token)) {
    return new Response("bad or missing token\n", {
      status: 401,
      headers: { "content-type": "text/plain", "www-authenticate": "Bearer" },
    });
  }
  try {
    const { body, contentType } = await metricsExposition();
    return new Response(body, { headers: { "content-type": contentType } });
  } catch (error) {
    console.error("metrics:", error);
    return new Response("metrics failed\n", { status: 500, headers: { "content-type": "text/plain" } });
  }
}
