import { createRestRouter } from "./router.ts";
import { routes } from "./routes.ts";

export const handleRest = createRestRouter(routes);
