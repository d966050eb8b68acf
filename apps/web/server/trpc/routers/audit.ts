import { router } from "../init.ts";

export const auditRouter = router({});
