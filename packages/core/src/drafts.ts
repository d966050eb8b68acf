import type { Prisma } from "@millrace/db";
import type { CoreContext } from "./context.ts";
import { invalidInput } from "./errors.ts";
import { authorizePath } from "./access.ts";
import { parsePath } from "./paths.ts";
import { requirePermission } from "./permissions.ts";
import { MAX_SCRIPT_BYTES } from "./scripts.ts";
import type { Membership } from "./membership.ts";

/**
 * Drafts: an editor's unsaved work on a script, saved as they type and restored when they come
 * back. A draft is personal: it is keyed by its author, so nobody else reads or replaces it. One
 * per workspace and path, `""` being the draft of a script not deployed yet. Deploying a path
 * deletes its author's draft (see deployScript).
 */

/** The draft of a script that has no path yet (the "new script" page). */
export const NEW_SCRIPT_DRAFT = "";
/** The code of a draft may be as large as a script; its other fields (settings) get this much more. */
export const MAX_DRAFT_EXTRA_BYTES = 64 * 1024;

export interface Draft {
  path: string;
  value: Record<string, unknown>;
  updatedAt: Date;
}

async function checkDraftPath(ctx: CoreContext, membership: Membership, path: string): Promise<void> {
  requirePermission(membership, "script.write");
  if (typeof path !== "string") throw invalidInput("path", "is required");
  if (path === NEW_SCRIPT_DRAFT) return;
  parsePath(path);
  await authorizePath(ctx, membership, path, "write");
}

function checkedValue(value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw invalidInput("value", "must be a JSON object");
  const content = (value as { content?: unknown }).content;
  if (content !== undefined && typeof content !== "string") throw invalidInput("content", "must be a string");
  const contentBytes = typeof content === "string" ? Buffer.byteLength(content) : 0;
  if (contentBytes > MAX_SCRIPT_BYTES) {
    throw invalidInput(
      "content",
      `the draft's code is ${Math.ceil(contentBytes / 1024)} KiB: a draft keeps at most ${MAX_SCRIPT_BYTES / 1024} KiB, as a script does`,
    );
  }
  const totalBytes = Buffer.byteLength(JSON.stringify(value));
  if (totalBytes - contentBytes > MAX_DRAFT_EXTRA_BYTES) {
    throw invalidInput(
      "value",
      `the draft's settings take ${Math.ceil((totalBytes - contentBytes) / 1024)} KiB: at most ${MAX_DRAFT_EXTRA_BYTES / 1024} KiB besides the code`,
    );
  }
  return value as Record<string, unknown>;
}

/** The caller's own draft at `path` in the workspace, or null. */
export async function getDraft(
  ctx: CoreContext,
  membership: Membership,
  path: string,
): Promise<Draft | null> {
  await checkDraftPath(ctx, membership, path);
  const row = await ctx.db.draft.findUnique({
    where: {
      workspaceId_userId_path: {
        workspaceId: membership.workspace.id,
        userId: membership.principal.userId,
        path,
      },
    },
  });
  if (!row) return null;
  return { path: row.path, value: row.value as Record<string, unknown>, updatedAt: row.updatedAt };
}

/** Creates or replaces the caller's draft at `path`. */
export async function saveDraft(
  ctx: CoreContext,
  membership: Membership,
  input: { path: string; value: unknown },
): Promise<Draft> {
  await checkDraftPath(ctx, membership, input.path);
  const value = checkedValue(input.value) as Prisma.InputJsonValue;
  const key = {
    workspaceId: membership.workspace.id,
    userId: membership.principal.userId,
    path: input.path,
  };
  const row = await ctx.db.draft.upsert({
    where: { workspaceId_userId_path: key },
    create: { ...key, value },
    update: { value, updatedAt: new Date() },
  });
  return { path: row.path, value: row.value as Record<string, unknown>, updatedAt: row.updatedAt };
}

/** Deletes the caller's draft at `path`, if any. */
export async function discardDraft(ctx: CoreContext, membership: Membership, path: string): Promise<void> {
  await checkDraftPath(ctx, membership, path);
  await deleteOwnDraft(ctx, membership, path);
}

/** Deletes the caller's draft at `path` without checking anything (deploy has checked already). */
export async function deleteOwnDraft(ctx: CoreContext, membership: Membership, path: string): Promise<void> {
  await ctx.db.draft.deleteMany({
    where: { workspaceId: membership.workspace.id, userId: membership.principal.userId, path },
  });
}
