import type { Route } from "../router.ts";

export const resourceRoutes: Route[] = [];
