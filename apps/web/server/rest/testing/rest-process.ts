// The web app's REST router (the handlers Next serves under /api) and tRPC (/api/trpc, without a
// browser session: API tokens only) on a plain Node HTTP server, as
// a process of its own: a test can then watch it from outside (is its event loop free? does it
// survive?) as a client of a real server would. Reads DATABASE_URL and MILLRACE_SECRET_KEY like
// the web server; prints `listening <url>` once it answers.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { handleTrpc } from "../../trpc/handler.ts";
import { handleRest } from "../handler.ts";

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers: req.headers as Record<string, string>,
      ...(body && req.method !== "GET" ? { body } : {}),
    });
    const handle = request.url.includes("/api/trpc/") ? handleTrpc : handleRest;
    void handle(request).then(async (response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
