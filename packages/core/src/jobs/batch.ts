import { runFlowByPath } from "../flows/engine/run.ts";
import { getScriptByPath } from "../scripts.ts";
import { AppError, invalidInput } from "../errors.ts";
import type { Membership } from "../membership.ts";
import { requirePermission } from "../permissions.ts";
import { assertTagAllowed } from "../workers/custom-tags.ts";
import { enqueueCopies, noopJob } from "./enqueue.ts";
import { jobBounds, previewJobInput, scriptJobInput, type JobsContext, type PreviewInput } from "./run.ts";
import { resolveTag } from "./tags.ts";

/** The most jobs one add_batch_jobs call writes: one statement, one transaction. */
export const MAX_BATCH_JOBS = 10_000;

/** What Windmill's `add_batch_jobs/{n}` starts `n` of (its BatchInfo, without flow values). */
export type BatchRequest =
  | { kind: "noop"; tag?: string | null }
  | { kind: "script"; path: string; tag?: string | null }
  | { kind: "rawscript"; rawscript: PreviewInput }
  | { kind: "flow"; path: string };

/**
 * Starts `count` identical jobs (Windmill's `jobs/add_batch_jobs/{n}`, which load tests and fan-outs
 * use) and answers their ids. Jobs without arguments, as Windmill's. Scripts, raw scripts and no-op
 * jobs are written together in one statement (enqueueCopies): all of them or none. A flow batch
 * starts its flows one by one, as many `jobs/run/f` calls would; a failure stops it there.
 */
export async function addBatchJobs(
  ctx: JobsContext,
  membership: Membership,
  request: BatchRequest,
  count: number,
): Promise<string[]> {
  if (!Number.isInteger(count) || count < 1 || count > MAX_BATCH_JOBS)
    throw invalidInput("n", `must be a whole number from 1 to ${MAX_BATCH_JOBS}`);
  switch (request.kind) {
    case "flow": {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push(await runFlowByPath(ctx, membership, request.path, {}));
      return ids;
    }
    case "script": {
      requirePermission(membership, "job.run");
      const { pathScope } = membership.principal;
      if (pathScope && pathScope !== request.path)
        throw new AppError("FORBIDDEN", `this token may only run ${pathScope}`);
      const script = await getScriptByPath(ctx, membership, request.path);
      const input = await scriptJobInput(ctx, membership, script, {}, { tag: request.tag ?? null });
      return enqueueCopies(ctx.pool, ctx.boss, input, count);
    }
    case "rawscript":
      return enqueueCopies(ctx.pool, ctx.boss, previewJobInput(ctx, membership, request.rawscript), count);
    case "noop": {
      requirePermission(membership, "job.run");
      const workspaceId = membership.workspace.id;
      const tag = resolveTag(request.tag || "other", workspaceId, {});
      await assertTagAllowed(ctx.pool, workspaceId, tag, "tag");
      const { principal } = membership;
      const input = {
        ...noopJob(workspaceId, tag, {}, principal.username),
        boundedBy: jobBounds(principal, null),
        audit: { actor: principal, entry: { workspaceId, operation: "jobs.run.noop", resource: null } },
      };
      return enqueueCopies(ctx.pool, ctx.boss, input, count);
    }
  }
}
