import { getAudit, listAudit, parseDateTime, type AuditRow } from "@millrace/core";
import { z } from "zod";
import { json } from "../../http.ts";
import { defineRoute, queryInt } from "../define.ts";
import type { Route } from "../router.ts";
import { queryFlag } from "./params.ts";

const ACTION_KINDS = ["Created", "Updated", "Delete", "Execute"] as const;

/** windmill-client's AuditLog. */
const windmillAuditShape = z.object({
  workspace_id: z.string(),
  id: z.number(),
  timestamp: z.string(),
  username: z.string(),
  operation: z.string(),
  action_kind: z.enum(ACTION_KINDS),
  resource: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
  ip: z.string().optional(),
});

export function windmillAudit(row: AuditRow) {
  return {
    workspace_id: row.workspaceId ?? "",
    id: row.id,
    timestamp: row.at.toISOString(),
    username: row.username,
    operation: row.operation,
    action_kind: row.actionKind,
    resource: row.resource ?? undefined,
    parameters: row.parameters ?? undefined,
    ip: row.ip ?? undefined,
  };
}

/** A comma-separated list (`operations=a,b`); blank is no list. */
const commaList = z.string().transform((value) => {
  const list = value
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
  return list.length ? list : undefined;
});

export const auditRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/audit/list",
    summary: "listAuditLogs",
    tag: "audit",
    query: z.object({
      page: queryInt.optional(),
      per_page: queryInt.optional(),
      before: z.string().optional(),
      after: z.string().optional(),
      username: z.string().optional(),
      operation: z.string().optional(),
      operations: commaList.optional(),
      exclude_operations: commaList.optional(),
      resource: z.string().optional(),
      action_kind: z.enum(ACTION_KINDS, { error: `must be one of ${ACTION_KINDS.join(", ")}` }).optional(),
      all_workspaces: queryFlag.optional(),
    }),
    response: z.array(windmillAuditShape),
    handler: async (ctx, { query }) => {
      const rows = await listAudit(ctx.services, await ctx.membership(), {
        page: query.page,
        perPage: query.per_page,
        before: query.before?.trim() ? parseDateTime("before", query.before) : undefined,
        after: query.after?.trim() ? parseDateTime("after", query.after) : undefined,
        username: query.username?.trim() || undefined,
        operation: query.operation?.trim() || undefined,
        operations: query.operations,
        excludeOperations: query.exclude_operations,
        resource: query.resource?.trim() || undefined,
        actionKind: query.action_kind,
        allWorkspaces: query.all_workspaces ?? false,
      });
      return json(rows.map(windmillAudit));
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/audit/get/:id",
    summary: "getAuditLog",
    tag: "audit",
    params: z.object({ workspace: z.string(), id: z.string() }),
    response: windmillAuditShape,
    handler: async (ctx, { params }) =>
      json(windmillAudit(await getAudit(ctx.services, await ctx.membership(), Number(params.id)))),
  }),
];
