// Approvals of suspended flow steps, on Windmill's paths (windmill-client: getResumeUrls,
// resumeSuspendedJobGet/Post, cancelSuspendedJobGet/Post, getSuspendedJobFlow,
// resumeSuspendedFlowAsOwner): thin adapters over packages/core/src/flows/engine/approvals.ts.
// The jobs_u routes are signed URLs: they need no credential, but a signed-in caller approves as
// themself (and must be, when the step asks for user_auth_required, groups or no self-approval).
import {
  getResumeUrls,
  getSuspendedJobFlow,
  parseResumeId,
  resumeSuspendedFlowAsOwner,
  resumeSuspendedJob,
  type Membership,
} from "@millrace/core";
import { z } from "zod";
import { serverEnv } from "../../env.ts";
import { json, text } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { RestContext, Route } from "../router.ts";
import { textAnswer } from "./params.ts";

/**
 * The caller's membership when the request is signed in, else null (an anonymous approver). A
 * signed-in caller who is no member of the workspace gets the 404 any workspace route gives them.
 */
async function optionalMembership(ctx: RestContext): Promise<Membership | null> {
  const principal = await ctx.principal().catch(() => null);
  if (!principal) return null;
  return ctx.membership();
}

/** GET's `payload`: base64 (or base64url) JSON, as Windmill's approval links carry it. */
function decodePayload(raw: string | undefined): unknown {
  if (raw === undefined) return {};
  try {
    return JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    return raw;
  }
}

const signedParams = z.object({
  workspace: z.string(),
  id: z.string(),
  resume_id: z.string(),
  signature: z.string(),
});
const approverQuery = z.object({ approver: z.string().optional() });
const getQuery = approverQuery.extend({
  /** base64 JSON, as Windmill's approval links carry it. */
  payload: z.string().optional(),
});
/** The payload a POST carries: any JSON (empty: `{}`). */
const postedPayload = z.unknown();

type Decision = {
  params: z.output<typeof signedParams>;
  approver: string | undefined;
  payload: unknown;
};

async function decide(ctx: RestContext, cancel: boolean, { params, approver, payload }: Decision) {
  const message = await resumeSuspendedJob(ctx.services, {
    workspaceId: params.workspace,
    jobId: params.id,
    resumeId: parseResumeId(params.resume_id),
    signature: params.signature,
    approver: approver ?? null,
    payload,
    cancel,
    membership: await optionalMembership(ctx),
    instanceKey: serverEnv().MILLRACE_SECRET_KEY,
  });
  return text(message);
}

const RESUME = "/api/w/:workspace/jobs_u/resume/:id/:resume_id/:signature";
const CANCEL = "/api/w/:workspace/jobs_u/cancel/:id/:resume_id/:signature";

/** The four signed decision routes: GET (payload in the query) and POST (in the body). */
function decisionRoutes(pattern: string, cancel: boolean, names: [string, string]): Route[] {
  const answer = textAnswer(cancel ? "the step was canceled" : "the step was approved");
  return [
    defineRoute({
      method: "GET",
      pattern,
      summary: names[0],
      tag: "job",
      auth: "public",
      params: signedParams,
      query: getQuery,
      response: answer,
      handler: (ctx, { params, query }) =>
        decide(ctx, cancel, { params, approver: query.approver, payload: decodePayload(query.payload) }),
    }),
    defineRoute({
      method: "POST",
      pattern,
      summary: names[1],
      tag: "job",
      auth: "public",
      params: signedParams,
      query: approverQuery,
      body: postedPayload,
      response: answer,
      handler: (ctx, { params, query, body }) =>
        decide(ctx, cancel, { params, approver: query.approver, payload: body }),
    }),
  ];
}

export const flowApprovalRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/jobs/resume_urls/:id/:resume_id",
    summary: "getResumeUrls",
    tag: "job",
    params: z.object({ workspace: z.string(), id: z.string(), resume_id: z.string() }),
    query: approverQuery,
    response: z.object({
      approvalPage: z.string(),
      resume: z.string(),
      cancel: z.string(),
    }),
    handler: async (ctx, { params, query }) =>
      json(
        await getResumeUrls(ctx.services, await ctx.membership(), {
          jobId: params.id,
          resumeId: parseResumeId(params.resume_id),
          approver: query.approver ?? null,
          baseUrl: serverEnv().BASE_URL,
          instanceKey: serverEnv().MILLRACE_SECRET_KEY,
        }),
      ),
  }),
  ...decisionRoutes(RESUME, false, ["resumeSuspendedJobGet", "resumeSuspendedJobPost"]),
  ...decisionRoutes(CANCEL, true, ["cancelSuspendedJobGet", "cancelSuspendedJobPost"]),
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/get_flow/:id/:resume_id/:signature",
    summary: "getSuspendedJobFlow",
    tag: "job",
    auth: "public",
    params: signedParams,
    query: approverQuery,
    response: z.record(z.string(), z.unknown()),
    handler: async (ctx, { params, query }) => {
      // Anyone with the link; a signed-in outsider gets the 404 of any workspace route.
      await optionalMembership(ctx);
      return json(
        await getSuspendedJobFlow(ctx.services, {
          workspaceId: params.workspace,
          jobId: params.id,
          resumeId: parseResumeId(params.resume_id),
          signature: params.signature,
          approver: query.approver ?? null,
          instanceKey: serverEnv().MILLRACE_SECRET_KEY,
        }),
      );
    },
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/flow/resume/:id",
    summary: "resumeSuspendedFlowAsOwner",
    tag: "job",
    params: z.object({ workspace: z.string(), id: z.string() }),
    body: postedPayload,
    response: textAnswer("the step was approved"),
    handler: async (ctx, { params, body }) =>
      text(await resumeSuspendedFlowAsOwner(ctx.services, await ctx.membership(), params.id, body)),
  }),
];
