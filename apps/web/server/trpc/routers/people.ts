import { router } from "../init.ts";

export const peopleRouter = router({});
