import { z } from "zod";
import {
  createVariable,
  deleteVariable,
  getVariable,
  getVariableValue,
  listVariables,
  updateVariable,
  type VariableView,
} from "@millrace/core";
import { router, workspaceProcedure } from "../init.ts";

function variableView(variable: VariableView) {
  return {
    path: variable.path,
    value: variable.value,
    isSecret: variable.isSecret,
    description: variable.description,
    createdBy: variable.createdBy,
    updatedAt: variable.updatedAt.toISOString(),
  };
}

const path = z.object({ path: z.string() });

export const variableRouter = router({
  list: workspaceProcedure.query(async ({ ctx }) =>
    (await listVariables(ctx.services, ctx.membership, { perPage: 1000 })).map(variableView),
  ),
  /** For the edit form: a secret's value stays hidden (see `reveal`). */
  get: workspaceProcedure
    .input(path)
    .query(async ({ ctx, input }) =>
      variableView(await getVariable(ctx.services, ctx.membership, input.path, { decryptSecret: false })),
    ),
  /** Shows a secret's value on request; audited like every secret read. */
  reveal: workspaceProcedure.input(path).mutation(async ({ ctx, input }) => ({
    value: await getVariableValue(ctx.services, ctx.membership, input.path),
  })),
  create: workspaceProcedure
    .input(
      z.object({
        path: z.string(),
        value: z.string(),
        isSecret: z.boolean().default(false),
        description: z.string().default(""),
      }),
    )
    .mutation(async ({ ctx, input }) =>
      variableView(await createVariable(ctx.services, ctx.membership, input)),
    ),
  update: workspaceProcedure
    .input(
      z.object({
        path: z.string(),
        newPath: z.string().optional(),
        /** Omitted: the value is kept (how a secret is edited without revealing it). */
        value: z.string().optional(),
        isSecret: z.boolean().optional(),
        description: z.string().optional(),
      }),
    )
    .mutation(async ({ ctx, input }) =>
      variableView(
        await updateVariable(ctx.services, ctx.membership, input.path, {
          path: input.newPath,
          value: input.value,
          isSecret: input.isSecret,
          description: input.description,
        }),
      ),
    ),
  delete: workspaceProcedure.input(path).mutation(async ({ ctx, input }) => {
    await deleteVariable(ctx.services, ctx.membership, input.path);
    return { ok: true };
  }),
});
