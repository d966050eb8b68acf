import type { Route } from "../router.ts";

export const governanceRoutes: Route[] = [];
