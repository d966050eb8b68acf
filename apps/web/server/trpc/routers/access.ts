import { z } from "zod";
import { pathRights, type Action } from "@millrace/core";
import { router, workspaceProcedure } from "../init.ts";

const WRITE_ACTION: Record<"script" | "variable" | "resource" | "schedule", Action> = {
  script: "script.write",
  variable: "variable.write",
  resource: "resource.write",
  schedule: "schedule.write",
};

/**
 * What the caller may do with an item by its path, so that a page offers only what they may do:
 * canWrite follows the role and the path (u/ owner, folder writer), canRun the role.
 */
export const accessRouter = router({
  path: workspaceProcedure
    .input(z.object({ path: z.string(), kind: z.enum(["script", "variable", "resource", "schedule"]) }))
    .query(({ ctx, input }) =>
      pathRights(ctx.services, ctx.membership, input.path, WRITE_ACTION[input.kind]),
    ),
});
