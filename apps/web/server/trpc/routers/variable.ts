import { router } from "../init.ts";

export const variableRouter = router({});
