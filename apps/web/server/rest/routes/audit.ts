import type { Route } from "../router.ts";

export const auditRoutes: Route[] = [];
