// A fetch-style handler (Request → Response) on a plain Node HTTP server on 127.0.0.1, as the tests
// serve the web app's REST router and tRPC without Next.
import http from "node:http";
import type { AddressInfo } from "node:net";

export type FetchHandler = (request: Request) => Promise<Response>;

export async function serveFetchHandler(handle: FetchHandler): Promise<{ server: http.Server; url: string }> {
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
      void handle(request).then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Stops what the web app's services started in this process (tests serving the router in-process). */
export async function stopAppServices(): Promise<void> {
  const { getServices } = await import("../../services.ts");
  const started = await getServices();
  await started.boss.stop({ graceful: false, close: true, timeout: 2000 }).catch(() => {});
  await started.events.close();
  await started.pool.end();
}

/** Calls `base` with a bearer token, a JSON body when given; answers the status and the text. */
export function bearerCaller(base: () => string, token: () => string) {
  return async (method: string, path: string, body?: unknown, bearer = token()) => {
    const response = await fetch(`${base()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, text, json: () => JSON.parse(text) as unknown };
  };
}
