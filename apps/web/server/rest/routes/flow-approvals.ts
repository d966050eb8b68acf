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
import { serverEnv } from "../../env.ts";
import { json, readJson, text } from "../../http.ts";
import type { RestContext, Route } from "../router.ts";

function approverParam(ctx: RestContext): string | null {
  const approver = ctx.url.searchParams.get("approver");
  return approver === null || approver === "" ? null : approver;
}

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
function payloadParam(ctx: RestContext): unknown {
  const raw = ctx.url.searchParams.get("payload");
  if (raw === null || raw === "") return {};
  try {
    return JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    return raw;
  }
}

async function postedPayload(ctx: RestContext): Promise<unknown> {
  const body = await ctx.request.text();
  if (body.trim() === "") return {};
  return readJson(new Request(ctx.request.url, { method: "POST", body }));
}

function decide(cancel: boolean, method: "GET" | "POST"): Route["handler"] {
  return async (ctx) => {
    const message = await resumeSuspendedJob(ctx.services, {
      workspaceId: ctx.params.workspace ?? "",
      jobId: ctx.params.id ?? "",
      resumeId: parseResumeId(ctx.params.resume_id ?? ""),
      signature: ctx.params.signature ?? "",
      approver: approverParam(ctx),
      payload: method === "GET" ? payloadParam(ctx) : await postedPayload(ctx),
      cancel,
      membership: await optionalMembership(ctx),
      instanceKey: serverEnv().MILLRACE_SECRET_KEY,
    });
    return text(message);
  };
}

const RESUME = "/api/w/:workspace/jobs_u/resume/:id/:resume_id/:signature";
const CANCEL = "/api/w/:workspace/jobs_u/cancel/:id/:resume_id/:signature";

export const flowApprovalRoutes: Route[] = [
  {
    method: "GET",
    pattern: "/api/w/:workspace/jobs/resume_urls/:id/:resume_id",
    handler: async (ctx) =>
      json(
        await getResumeUrls(ctx.services, await ctx.membership(), {
          jobId: ctx.params.id ?? "",
          resumeId: parseResumeId(ctx.params.resume_id ?? ""),
          approver: approverParam(ctx),
          baseUrl: serverEnv().BASE_URL,
          instanceKey: serverEnv().MILLRACE_SECRET_KEY,
        }),
      ),
  },
  { method: "GET", pattern: RESUME, handler: decide(false, "GET") },
  { method: "POST", pattern: RESUME, handler: decide(false, "POST") },
  { method: "GET", pattern: CANCEL, handler: decide(true, "GET") },
  { method: "POST", pattern: CANCEL, handler: decide(true, "POST") },
  {
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/get_flow/:id/:resume_id/:signature",
    handler: async (ctx) => {
      // Anyone with the link; a signed-in outsider gets the 404 of any workspace route.
      await optionalMembership(ctx);
      return json(
        await getSuspendedJobFlow(ctx.services, {
          workspaceId: ctx.params.workspace ?? "",
          jobId: ctx.params.id ?? "",
          resumeId: parseResumeId(ctx.params.resume_id ?? ""),
          signature: ctx.params.signature ?? "",
          approver: approverParam(ctx),
          instanceKey: serverEnv().MILLRACE_SECRET_KEY,
        }),
      );
    },
  },
  {
    method: "POST",
    pattern: "/api/w/:workspace/jobs/flow/resume/:id",
    handler: async (ctx) =>
      text(
        await resumeSuspendedFlowAsOwner(
          ctx.services,
          await ctx.membership(),
          ctx.params.id ?? "",
          await postedPayload(ctx),
        ),
      ),
  },
];
