import { router } from "../init.ts";

export const scheduleRouter = router({});
