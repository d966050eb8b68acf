import { TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { DATABASE_RETRY_AFTER_SECS, PayloadTooLargeError, readText } from "../http.ts";
import { appRouter } from "./app-router.ts";
import { createTrpcContext } from "./init.ts";

/**
 * tRPC over fetch, with the REST API's body limit (REQUEST_BODY_LIMIT_MB): a larger body is
 * refused with 413 before anything parses it, as REST does, never held whole in memory.
 */
export async function handleTrpc(request: Request): Promise<Response> {
  let tooLarge: PayloadTooLargeError | null = null;
  let req = request;
  if (request.method !== "GET" && request.method !== "HEAD") {
    let body = "";
    try {
      body = await readText(request);
    } catch (error) {
      if (!(error instanceof PayloadTooLargeError)) throw error;
      tooLarge = error;
    }
    req = new Request(request.url, { method: request.method, headers: request.headers, body });
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    // Refused in the context, so that the answer is a tRPC error (batched calls included).
    createContext: () => {
      if (tooLarge) throw new TRPCError({ code: "PAYLOAD_TOO_LARGE", message: tooLarge.message });
      return createTrpcContext(req);
    },
    // Internal errors are logged by the error formatter (server/trpc/init.ts), without their
    // message, which may quote the input.
    // A 503 (the database away) says when to try again, as the REST API's do.
    responseMeta: ({ errors }) =>
      errors.some((error) => error.code === "SERVICE_UNAVAILABLE")
        ? { headers: { "retry-after": String(DATABASE_RETRY_AFTER_SECS) } }
        : {},
  });
}
