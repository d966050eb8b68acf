// The web server: Next.js for the UI, tRPC and sign-in, with one shortcut. A REST call that
// carries an API token (automation, the CLI, windmill-client, jobs calling back) goes straight to
// the REST router, the same handlers Next's `app/api/[...rest]` route serves, without Next's
// request pipeline: it costs 2–5 ms per call on a 2-core VM, a large share of a
// run_wait_result. Anything else (pages, sessions, tRPC, next-auth) is Next's.
import http from "node:http";
import { Readable } from "node:stream";
import next from "next";
import { requestToken } from "./server/auth/principal.ts";
import { serverEnv } from "./server/env.ts";
import { logInternalError, wholeBody } from "./server/http.ts";
import { metricsResponse, startServerMetrics } from "./server/metrics.ts";
import { handleRest } from "./server/rest/handler.ts";

const port = serverEnv().PORT;
const app = next({ dev: false, dir: import.meta.dirname, port, hostname: "localhost" });
const handleNext = app.getRequestHandler();
await app.prepare();

// Next's own API routes; every other /api path is the REST router's.
const NEXT_API = /^\/api\/(auth|trpc)(\/|$)/;

function headersOf(req: http.IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  // As Next does: the socket's address when no proxy in front said whom it forwards.
  if (!headers.has("x-forwarded-for") && req.socket.remoteAddress) {
    headers.set("x-forwarded-for", req.socket.remoteAddress);
  }
  return headers;
}

async function sendResponse(response: Response, res: http.ServerResponse): Promise<void> {
  res.statusCode = response.status;
  for (const [name, value] of response.headers) res.appendHeader(name, value);
  const whole = wholeBody(response);
  if (whole !== undefined) return void res.end(whole);
  if (!response.body) return void res.end();
  // Streams (SSE log updates) are written as they come, with backpressure.
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    if (res.destroyed) break;
    if (!res.write(chunk)) await new Promise((resolve) => res.once("drain", resolve));
  }
  res.end();
}

await startServerMetrics();

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`);
  if (url.pathname === "/metrics" && req.method === "GET") {
    void metricsResponse(req.headers.authorization).then((response) => sendResponse(response, res));
    return;
  }
  if (url.pathname.startsWith("/api/") && !NEXT_API.test(url.pathname)) {
    const headers = headersOf(req);
    if (requestToken(headers, url)) {
      // The client going away ends what the handler waits for (run_wait_result, SSE streams).
      const disconnected = new AbortController();
      res.on("close", () => disconnected.abort());
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const request = new Request(url, {
        method: req.method,
        headers,
        signal: disconnected.signal,
        ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: "half" } : {}),
      } as RequestInit);
      void handleRest(request)
        .then((response) => sendResponse(response, res))
        .catch((error: unknown) => {
          // Class and frames only: the message may quote the request (see logInternalError).
          if (!disconnected.signal.aborted) logInternalError(error, { route: `${req.method} REST response` });
          if (!res.headersSent) res.statusCode = 500;
          res.end();
        });
      return;
    }
  }
  void handleNext(req, res);
});
// All interfaces, as `next start`.
server.listen(port, () => console.log(`web server listening on port ${port}`));
