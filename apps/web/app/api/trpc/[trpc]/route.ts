import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "@/server/trpc/app-router";
import { createTrpcContext } from "@/server/trpc/init";

export const dynamic = "force-dynamic";

const handler = (request: Request) =>
  fetchRequestHandler({
    endpoint: "/api/trpc",
    req: request,
    router: appRouter,
    createContext: () => createTrpcContext(request),
    // Internal errors are logged by the error formatter (server/trpc/init.ts), without their
    // message, which may quote the input.
  });

export { handler as GET, handler as POST };
