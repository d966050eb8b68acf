import { router } from "../init.ts";

export const resourceRouter = router({});
