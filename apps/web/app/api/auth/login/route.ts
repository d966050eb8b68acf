import { handleRest } from "@/server/rest/handler";

// Windmill's login path sits under next-auth's /api/auth/*; this static route takes precedence.
export const dynamic = "force-dynamic";
export const POST = handleRest;
