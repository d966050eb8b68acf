// The web app's REST router (the handlers Next serves under /api) and tRPC (/api/trpc, without a
// browser session: API tokens only) on a plain Node HTTP server, as a process of its own: a test
// can then watch it from outside (is its event loop free? does it survive?) as a client of a real
// server would. Reads DATABASE_URL and MILLRACE_SECRET_KEY like the web server; prints
// `listening <url>` once it answers. With SERVER_BACKGROUND=true it is a whole server but for the
// UI: it competes for leadership (zombie monitor, fleet sampler, retention…), and serves /metrics
// as the web server does (METRICS_TOKEN, METRICS_ADDR).
import { startBackgroundTasks } from "../../background.ts";
import { metricsResponse, startServerMetrics } from "../../metrics.ts";
import { handleTrpc } from "../../trpc/handler.ts";
import { handleRest } from "../handler.ts";
import { serveFetchHandler } from "./node-server.ts";

if (process.env.SERVER_BACKGROUND === "true") {
  await startServerMetrics();
  await startBackgroundTasks();
}

const { url } = await serveFetchHandler((request) => {
  const { pathname } = new URL(request.url);
  if (pathname === "/metrics") return metricsResponse(request.headers.get("authorization"));
  return pathname.startsWith("/api/trpc/") ? handleTrpc(request) : handleRest(request);
});
console.log(`listening ${url}`);
