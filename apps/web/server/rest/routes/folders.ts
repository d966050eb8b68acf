import type { Route } from "../router.ts";

export const folderRoutes: Route[] = [];
