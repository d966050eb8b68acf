import {
  getAudit,
  invalidInput,
  listAudit,
  parseDateTime,
  type ActionKind,
  type AuditRow,
} from "@millrace/core";
import { json } from "../../http.ts";
import type { RestContext, Route } from "../router.ts";
import { intParam } from "./params.ts";

const ACTION_KINDS = ["Created", "Updated", "Delete", "Execute"];

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

function param(ctx: RestContext, name: string): string | undefined {
  const value = ctx.url.searchParams.get(name);
  return value === null || value.trim() === "" ? undefined : value;
}

function list(ctx: RestContext, name: string): string[] | undefined {
  return param(ctx, name)
    ?.split(",")
    .map((v) => v.trim())
    .filter(Boolean);
}

export const auditRoutes: Route[] = [
  {
    method: "GET",
    pattern: "/api/w/:workspace/audit/list",
    handler: async (ctx) => {
      const before = param(ctx, "before");
      const after = param(ctx, "after");
      const actionKind = param(ctx, "action_kind");
      if (actionKind && !ACTION_KINDS.includes(actionKind)) {
        throw invalidInput("action_kind", `must be one of ${ACTION_KINDS.join(", ")}`);
      }
      const rows = await listAudit(ctx.services, await ctx.membership(), {
        page: intParam(ctx, "page"),
        perPage: intParam(ctx, "per_page"),
        before: before ? parseDateTime("before", before) : undefined,
        after: after ? parseDateTime("after", after) : undefined,
        username: param(ctx, "username"),
        operation: param(ctx, "operation"),
        operations: list(ctx, "operations"),
        excludeOperations: list(ctx, "exclude_operations"),
        resource: param(ctx, "resource"),
        actionKind: actionKind as ActionKind | undefined,
        allWorkspaces: param(ctx, "all_workspaces") === "true",
      });
      return json(rows.map(windmillAudit));
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/audit/get/:id",
    handler: async (ctx) =>
      json(windmillAudit(await getAudit(ctx.services, await ctx.membership(), Number(ctx.params.id)))),
  },
];
