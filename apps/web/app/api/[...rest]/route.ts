import { handleRest } from "@/server/rest/handler";

export const dynamic = "force-dynamic";

export const GET = handleRest;
export const POST = handleRest;
export const DELETE = handleRest;
