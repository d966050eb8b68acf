import type { Route } from "../router.ts";

export const scheduleRoutes: Route[] = [];
