import NextAuth from "next-auth";
import { getAuthOptions } from "@/server/auth/options";

export const dynamic = "force-dynamic";

type Handler = (request: Request, context: { params: Promise<{ nextauth: string[] }> }) => Promise<Response>;

const handler: Handler = async (request, context) =>
  // next-auth 4 reads `params` synchronously; Next 16 hands them over as a promise.
  (NextAuth(await getAuthOptions()) as unknown as Handler)(request, {
    params: await context.params,
  } as never);

export { handler as GET, handler as POST };
