import { z } from "zod";
import { listAudit, parseDateTime, type ActionKind } from "@millrace/core";
import { router, workspaceProcedure } from "../init.ts";

const optionalText = z.string().max(500).optional();

export const auditRouter = router({
  list: workspaceProcedure
    .input(
      z.object({
        page: z.number().int().min(1).default(1),
        perPage: z.number().int().min(1).max(100).default(50),
        username: optionalText,
        operation: optionalText,
        resource: optionalText,
        actionKind: z.enum(["Created", "Updated", "Delete", "Execute"]).optional(),
        before: optionalText,
        after: optionalText,
      }),
    )
    .query(async ({ ctx, input }) => {
      const rows = await listAudit(ctx.services, ctx.membership, {
        page: input.page,
        perPage: input.perPage,
        username: input.username || undefined,
        operation: input.operation || undefined,
        resource: input.resource || undefined,
        actionKind: input.actionKind as ActionKind | undefined,
        before: input.before ? parseDateTime("before", input.before) : undefined,
        after: input.after ? parseDateTime("after", input.after) : undefined,
      });
      return rows.map((row) => ({ ...row, at: row.at.toISOString() }));
    }),
});
