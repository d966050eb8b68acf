import { createRestRouter } from "./router.ts";
import { routes } from "./routes/index.ts";

export const handleRest = createRestRouter(routes);
