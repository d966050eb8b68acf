import {
  AppError,
  authenticate,
  createApiToken,
  createWorkspace,
  deployScript,
  getJob,
  getScriptByHash,
  getScriptByPath,
  isFinished,
  listJobs,
  listScripts,
  listWorkspaces,
  principalOf,
  runPreview,
  runScriptByPath,
  waitForJob,
  type RunOptions,
} from "@millrace/core";
import { invalidInput } from "@millrace/core";
import { json, readJson, readObject, text } from "../http.ts";
import type { RestContext, Route } from "./router.ts";
import { windmillJob, windmillScript } from "./shapes.ts";

export const MILLRACE_VERSION = "0.1.0";

function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw invalidInput(field, "must be a string");
  return value;
}

function requiredString(body: Record<string, unknown>, field: string): string {
  const value = optionalString(body, field);
  if (value === undefined) throw invalidInput(field, "is required");
  return value;
}

function optionalNumber(body: Record<string, unknown>, field: string): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number") throw invalidInput(field, "must be a number");
  return value;
}

function intParam(ctx: RestContext, name: string): number | undefined {
  const raw = ctx.url.searchParams.get(name);
  if (raw === null || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw invalidInput(name, `must be a whole number, got "${raw}"`);
  return value;
}

/** Run options from the query string, as Windmill's run endpoints take them. */
function runOptions(ctx: RestContext): RunOptions {
  const scheduledFor = ctx.url.searchParams.get("scheduled_for");
  const inSecs = intParam(ctx, "scheduled_in_secs");
  let when: Date | null = null;
  if (scheduledFor) {
    when = new Date(scheduledFor);
    if (Number.isNaN(when.getTime()))
      throw invalidInput("scheduled_for", `not a valid date-time: "${scheduledFor}"`);
  } else if (inSecs !== undefined) {
    if (inSecs < 0) throw invalidInput("scheduled_in_secs", "must not be negative");
    when = new Date(Date.now() + inSecs * 1000);
  }
  return { scheduledFor: when, priority: intParam(ctx, "priority") ?? null };
}

/** Run arguments: a JSON object body is the args; any other body is wrapped as `{ body }`. */
async function runArgs(ctx: RestContext): Promise<unknown> {
  const type = ctx.request.headers.get("content-type") ?? "";
  if (type.includes("application/json") || type === "") return readJson(ctx.request);
  return { body: await ctx.request.text() };
}

async function waitedResult(ctx: RestContext, jobId: string): Promise<Response> {
  const membership = await ctx.membership();
  const job = await waitForJob(ctx.services, membership, jobId, ctx.services.waitResultTimeoutMs);
  return json(job.result, job.status === "success" ? 200 : 500);
}

export const routes: Route[] = [
  { method: "GET", pattern: "/api/version", handler: async () => text(`Millrace v${MILLRACE_VERSION}`) },

  {
    method: "POST",
    pattern: "/api/auth/login",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const user = await authenticate(
        ctx.services,
        requiredString(body, "email"),
        requiredString(body, "password"),
      );
      const token = await createApiToken(ctx.services, principalOf(user), {
        label: "login",
        kind: "session",
        expiresAt: new Date(Date.now() + 7 * 24 * 3600 * 1000),
      });
      const response = text(token);
      response.headers.set(
        "set-cookie",
        `token=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${7 * 24 * 3600}`,
      );
      return response;
    },
  },

  {
    method: "POST",
    pattern: "/api/users/tokens/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const expiration = optionalString(body, "expiration");
      const expiresAt = expiration ? new Date(expiration) : null;
      if (expiresAt && Number.isNaN(expiresAt.getTime()))
        throw invalidInput("expiration", "not a valid date-time");
      const principal = await ctx.principal();
      if (principal.username === "superadmin_secret") {
        throw new AppError(
          "INVALID_INPUT",
          "SUPERADMIN_SECRET is not a user; sign in as a user to create tokens",
        );
      }
      const token = await createApiToken(ctx.services, principal, {
        label: optionalString(body, "label") ?? null,
        expiresAt,
        workspaceId: optionalString(body, "workspace_id") ?? null,
      });
      return text(token, 201);
    },
  },

  {
    method: "POST",
    pattern: "/api/workspaces/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const workspace = await createWorkspace(ctx.services, await ctx.principal(), {
        id: requiredString(body, "id"),
        name: requiredString(body, "name"),
      });
      return text(`Created workspace ${workspace.id}`, 201);
    },
  },

  {
    method: "GET",
    pattern: "/api/workspaces/list",
    handler: async (ctx) => {
      const workspaces = await listWorkspaces(ctx.services, await ctx.principal());
      return json(workspaces.map((w) => ({ id: w.id, name: w.name, owner: "", role: w.role })));
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/scripts/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const script = await deployScript(ctx.services, await ctx.membership(), {
        path: requiredString(body, "path"),
        content: requiredString(body, "content"),
        language: requiredString(body, "language"),
        summary: optionalString(body, "summary") ?? "",
        description: optionalString(body, "description") ?? "",
        parentHash: optionalString(body, "parent_hash") ?? null,
        tag: optionalString(body, "tag") ?? null,
        timeoutSecs: optionalNumber(body, "timeout") ?? null,
        schema: body.schema,
      });
      return text(script.hash, 201);
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/scripts/get/p/*path",
    handler: async (ctx) =>
      json(
        windmillScript(await getScriptByPath(ctx.services, await ctx.membership(), ctx.params.path ?? "")),
      ),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/scripts/get/h/:hash",
    handler: async (ctx) =>
      json(
        windmillScript(await getScriptByHash(ctx.services, await ctx.membership(), ctx.params.hash ?? "")),
      ),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/scripts/list",
    handler: async (ctx) => {
      const scripts = await listScripts(ctx.services, await ctx.membership(), {
        page: intParam(ctx, "page"),
        perPage: intParam(ctx, "per_page"),
        pathStart: ctx.url.searchParams.get("path_start") ?? undefined,
      });
      return json(scripts.map((script) => windmillScript(script, { withContent: false })));
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/p/*path",
    handler: async (ctx) => {
      const options = runOptions(ctx);
      const id = await runScriptByPath(
        ctx.services,
        await ctx.membership(),
        ctx.params.path ?? "",
        await runArgs(ctx),
        options,
      );
      return text(id, 201);
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run_wait_result/p/*path",
    handler: async (ctx) => {
      const options = runOptions(ctx);
      const id = await runScriptByPath(
        ctx.services,
        await ctx.membership(),
        ctx.params.path ?? "",
        await runArgs(ctx),
        options,
      );
      return waitedResult(ctx, id);
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/preview",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const id = await runPreview(ctx.services, await ctx.membership(), {
        language: requiredString(body, "language"),
        content: requiredString(body, "content"),
        args: body.args ?? {},
        path: optionalString(body, "path") ?? null,
      });
      return text(id, 201);
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/get/:id",
    handler: async (ctx) =>
      json(windmillJob(await getJob(ctx.services, await ctx.membership(), ctx.params.id ?? ""))),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/completed/get_result/:id",
    handler: async (ctx) => {
      const job = await getJob(ctx.services, await ctx.membership(), ctx.params.id ?? "");
      if (!isFinished(job)) throw new AppError("NOT_FOUND", `job ${job.id} has not completed yet`);
      return json(job.result);
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/jobs/list",
    handler: async (ctx) => {
      const jobs = await listJobs(ctx.services, await ctx.membership(), {
        page: intParam(ctx, "page"),
        perPage: intParam(ctx, "per_page"),
        scriptPathExact: ctx.url.searchParams.get("script_path_exact") ?? undefined,
      });
      return json(jobs.map((job) => windmillJob(job)));
    },
  },
];
