import { z } from "zod";
import {
  archiveFlow,
  can,
  createFlow,
  decideFlowApproval,
  flowApproval,
  deleteFlow,
  flowHistory,
  getFlow,
  getFlowRun,
  listFlows,
  pathRights,
  runFlowByPath,
  runFlowPreview,
  testFlowStep,
  updateFlow,
  writablePaths,
  type FlowWarning,
  type StoredFlow,
} from "@millrace/core";
import { serverEnv } from "../../env.ts";
import { router, workspaceProcedure } from "../init.ts";
import { jobSummaryView } from "./job.ts";

function flowView(flow: StoredFlow & { warnings?: FlowWarning[] }) {
  return {
    // A deploy's warnings: steps that will fail when they run (hub scripts, paths not deployed yet).
    warnings: flow.warnings ?? [],
    path: flow.path,
    summary: flow.summary,
    description: flow.description,
    value: flow.value,
    schema: flow.schema,
    archived: flow.archived,
    editedBy: flow.edited_by,
    editedAt: flow.edited_at,
    versionId: flow.version_id,
  };
}

const flowDocument = {
  summary: z.string().default(""),
  description: z.string().default(""),
  // Checked by core, which names the step and the field at fault.
  value: z.unknown(),
  schema: z.record(z.string(), z.unknown()).nullable().optional(),
  deploymentMessage: z.string().max(1000).nullable().optional(),
};

const args = z.record(z.string(), z.unknown());

/** The flow editor, the flow pages and the flow run view (components/flow-editor, flow-run). */
export const flowRouter = router({
  list: workspaceProcedure
    .input(z.object({ includeArchived: z.boolean().default(false) }))
    .query(async ({ ctx, input }) => {
      const flows = await listFlows(ctx.services, ctx.membership, {
        perPage: 1000,
        showArchived: input.includeArchived,
        orderDesc: false,
      });
      const writable = await writablePaths(
        ctx.services,
        ctx.membership,
        flows.map((flow) => flow.path),
      );
      return flows.map((flow) => ({
        path: flow.path,
        summary: flow.summary,
        archived: flow.archived,
        editedBy: flow.edited_by,
        editedAt: flow.edited_at,
        versionId: flow.version_id,
        steps: flow.value.modules.length,
        canWrite: writable.has(flow.path),
      }));
    }),
  /** The flow at `path` (archived or not) and what the caller may do with it. */
  get: workspaceProcedure.input(z.object({ path: z.string() })).query(async ({ ctx, input }) => {
    const flow = await getFlow(ctx.services, ctx.membership, input.path);
    const rights = await pathRights(ctx.services, ctx.membership, input.path);
    return {
      ...flowView(flow),
      ...rights,
      canCreate: can(ctx.membership.role, "script.write"),
    };
  }),
  /** What the caller may do at `path`, whether or not a flow is there (the editor's role check). */
  access: workspaceProcedure
    .input(z.object({ path: z.string() }))
    .query(({ ctx, input }) => pathRights(ctx.services, ctx.membership, input.path)),
  /** Every deployed version, newest first. */
  history: workspaceProcedure
    .input(z.object({ path: z.string() }))
    .query(({ ctx, input }) => flowHistory(ctx.services, ctx.membership, input.path)),
  create: workspaceProcedure
    .input(z.object({ path: z.string(), ...flowDocument }))
    .mutation(async ({ ctx, input }) =>
      flowView(
        await createFlow(ctx.services, ctx.membership, {
          path: input.path,
          summary: input.summary,
          description: input.description,
          value: input.value,
          schema: input.schema ?? null,
          deployment_message: input.deploymentMessage ?? null,
        }),
      ),
    ),
  /** Deploys a new version; refused when `parentVersion` is not the latest (someone deployed since). */
  update: workspaceProcedure
    .input(z.object({ path: z.string(), parentVersion: z.number().int().nullable(), ...flowDocument }))
    .mutation(async ({ ctx, input }) =>
      flowView(
        await updateFlow(ctx.services, ctx.membership, input.path, {
          path: input.path,
          summary: input.summary,
          description: input.description,
          value: input.value,
          schema: input.schema ?? null,
          deployment_message: input.deploymentMessage ?? null,
          parent_version: input.parentVersion,
        }),
      ),
    ),
  archive: workspaceProcedure
    .input(z.object({ path: z.string(), archived: z.boolean().default(true) }))
    .mutation(async ({ ctx, input }) => {
      await archiveFlow(ctx.services, ctx.membership, input.path, input.archived);
      return { path: input.path };
    }),
  delete: workspaceProcedure.input(z.object({ path: z.string() })).mutation(async ({ ctx, input }) => {
    await deleteFlow(ctx.services, ctx.membership, input.path);
    return { path: input.path };
  }),
  /** Runs the deployed flow at `path`. */
  run: workspaceProcedure.input(z.object({ path: z.string(), args })).mutation(async ({ ctx, input }) => ({
    id: await runFlowByPath(ctx.services, ctx.membership, input.path, input.args),
  })),
  /** "Test the flow": runs the editor's flow as it is, without deploying it. */
  runPreview: workspaceProcedure
    .input(z.object({ value: z.unknown(), args, path: z.string().nullable().optional() }))
    .mutation(async ({ ctx, input }) => ({
      id: await runFlowPreview(ctx.services, ctx.membership, {
        value: input.value,
        args: input.args,
        path: input.path ?? null,
      }),
    })),
  /** "Test this step": one inline or script step alone, its inputs evaluated from the test input. */
  testStep: workspaceProcedure
    .input(
      z.object({
        module: z.unknown(),
        flowInput: args.default({}),
        results: args.default({}),
        previousResult: z.unknown().optional(),
        iter: z.object({ value: z.unknown(), index: z.number().int() }).optional(),
      }),
    )
    .mutation(({ ctx, input }) => testFlowStep(ctx.services, ctx.membership, input)),
  /** A flow run for the run view: the flow as it ran, its flow_status and its step jobs. */
  runStatus: workspaceProcedure.input(z.object({ id: z.string() })).query(async ({ ctx, input }) => {
    const { job, steps } = await getFlowRun(ctx.services, ctx.membership, input.id);
    return {
      job: { ...jobSummaryView(job), args: job.args, result: job.result },
      rawFlow: job.rawFlow,
      flowStatus: job.flowStatus,
      approval: await flowApproval(ctx.services, ctx.membership, job),
      steps: steps.map((step) => ({
        id: step.id,
        stepId: step.flowStepId,
        status: step.status,
        createdAt: step.createdAt.toISOString(),
        startedAt: step.startedAt?.toISOString() ?? null,
        completedAt: step.completedAt?.toISOString() ?? null,
        args: step.args,
        result: step.result,
      })),
    };
  }),
  /** Approves (or cancels) the step a flow run waits on, as the signed-in caller. */
  decideApproval: workspaceProcedure
    .input(z.object({ id: z.string(), cancel: z.boolean().default(false) }))
    .mutation(async ({ ctx, input }) => ({
      message: await decideFlowApproval(ctx.services, ctx.membership, {
        flowJobId: input.id,
        cancel: input.cancel,
        baseUrl: serverEnv().BASE_URL,
        instanceKey: serverEnv().MILLRACE_SECRET_KEY,
      }),
    })),
});
