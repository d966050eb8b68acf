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
    onError({ error }) {
      if (error.code === "INTERNAL_SERVER_ERROR") console.error(error);
    },
  });

export { handler as GET, handler as POST };
