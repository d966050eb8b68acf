import type { Route } from "../router.ts";

export const userRoutes: Route[] = [];
