import { handleTrpc } from "@/server/trpc/handler";

export const dynamic = "force-dynamic";

export { handleTrpc as GET, handleTrpc as POST };
