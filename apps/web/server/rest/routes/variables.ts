import type { Route } from "../router.ts";

export const variableRoutes: Route[] = [];
