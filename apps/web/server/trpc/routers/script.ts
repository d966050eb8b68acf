import { z } from "zod";
import { deployScript, getScriptByPath, listScripts } from "@millrace/core";
import type { Script } from "@millrace/db";
import { inferSchema, isLanguage, SignatureError, type ArgSchema } from "@millrace/runtime";
import { authedProcedure, router, workspaceProcedure } from "../init.ts";

function scriptView(script: Script) {
  return {
    path: script.path,
    hash: script.hash,
    summary: script.summary,
    description: script.description,
    language: script.language,
    content: script.content,
    schema: script.schema as unknown as ArgSchema,
    tag: script.tag,
    createdBy: script.createdBy,
    createdAt: script.createdAt.toISOString(),
  };
}

export const scriptRouter = router({
  list: workspaceProcedure.query(async ({ ctx }) => {
    const scripts = await listScripts(ctx.services, ctx.membership, { perPage: 1000 });
    return scripts.map(({ content: _content, ...script }) => ({
      ...scriptView({ ...script, content: "" }),
    }));
  }),
  get: workspaceProcedure
    .input(z.object({ path: z.string() }))
    .query(async ({ ctx, input }) =>
      scriptView(await getScriptByPath(ctx.services, ctx.membership, input.path)),
    ),
  deploy: workspaceProcedure
    .input(
      z.object({
        path: z.string(),
        summary: z.string().default(""),
        language: z.string(),
        content: z.string(),
        parentHash: z.string().nullable().default(null),
      }),
    )
    .mutation(async ({ ctx, input }) => scriptView(await deployScript(ctx.services, ctx.membership, input))),
  /** The input form as the editor types: no database, just the signature. */
  inferSchema: authedProcedure
    .input(z.object({ language: z.string(), content: z.string().max(512 * 1024) }))
    .query(({ input }) => {
      if (!isLanguage(input.language)) return { schema: null, error: `unknown language ${input.language}` };
      try {
        return { schema: inferSchema(input.language, input.content), error: null };
      } catch (error) {
        if (error instanceof SignatureError) return { schema: null, error: error.message };
        throw error;
      }
    }),
});
