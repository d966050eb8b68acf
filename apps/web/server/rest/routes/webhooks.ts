import type { Route } from "../router.ts";

export const webhookRoutes: Route[] = [];
