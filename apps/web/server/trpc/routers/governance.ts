import { router } from "../init.ts";

export const governanceRouter = router({});
