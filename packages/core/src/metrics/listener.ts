import http from "node:http";
import { metricsExposition } from "./registry.ts";

/**
 * Windmill's METRICS_ADDR: "true" listens on 0.0.0.0:8001 as Windmill does, "host:port" or
 * ":port" where given; unset or "false", no listener. Returns null for no listener.
 */
export function parseMetricsAddr(raw: string | undefined): { host: string; port: number } | null {
  const value = raw?.trim() ?? "";
  if (value === "" || value === "false") return null;
  if (value === "true") return { host: "0.0.0.0", port: 8001 };
  const match = /^(?:\[?([^\]]*)\]?)?:(\d{1,5})$/.exec(value) ?? /^()(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`METRICS_ADDR: expected "true", "host:port", ":port" or "port", got "${value}"`);
  }
  return { host: match[1] || "0.0.0.0", port };
}

/**
 * Serves GET /metrics on its own address (what Prometheus scrapes on a worker, or a server's
 * internal port). No authentication: bind it where only the scraper reaches it.
 */
export async function startMetricsListener(address: { host: string; port: number }): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" || path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("only GET /metrics here\n");
      return;
    }
    metricsExposition().then(
      ({ body, contentType }) => res.writeHead(200, { "content-type": contentType }).end(body),
      (error: unknown) => {
        res.writeHead(500, { "content-type": "text/plain" }).end("metrics failed\n");
        console.error("metrics:", error);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port, address.host, () => resolve());
  });
  return server;
}
