// The web app's REST router (the handlers Next serves under /api) and tRPC (/api/trpc, without a
// browser session: API tokens only) on a plain Node HTTP server, as a process of its own: a test
// can then watch it from outside (is its event loop free? does it survive?) as a client of a real
// server would. Reads DATABASE_URL and MILLRACE_SECRET_KEY like the web server; prints
// `listening <url>` once it answers.
import { handleTrpc } from "../../trpc/handler.ts";
import { handleRest } from "../handler.ts";
import { serveFetchHandler } from "./node-server.ts";

const { url } = await serveFetchHandler((request) =>
  new URL(request.url).pathname.startsWith("/api/trpc/") ? handleTrpc(request) : handleRest(request),
);
console.log(`listening ${url}`);
