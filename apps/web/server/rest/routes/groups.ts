import type { Route } from "../router.ts";

export const groupRoutes: Route[] = [];
