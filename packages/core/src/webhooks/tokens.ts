import { randomBytes } from "node:crypto";
import { recordAudit } from "../audit/index.ts";
import { ownRowsOnly } from "../access.ts";
import { refuseJobCredential } from "../auth/principal.ts";
import { hashToken, SUPERADMIN_SECRET_PRINCIPAL } from "../auth/tokens.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import { getFlow } from "../flows/store.ts";
import { getScriptByPath } from "../scripts.ts";
import type { Membership } from "../membership.ts";

export interface WebhookTokenView {
  tokenPrefix: string;
  label: string | null;
  /** The script or flow path the token may run. */
  path: string;
  ownerEmail: string;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  createdAt: Date;
}

export interface NewWebhookTokenInput {
  /** The script (or flow) the token may run, and nothing else. */
  path: string;
  label?: string | null;
  expiresAt?: Date | null;
}

/**
 * The script at `path` the caller can read, else the flow there (not archived): a webhook runs
 * either (`jobs/run/p/{path}` or `jobs/run/f/{path}`). NOT_FOUND names the script when neither is.
 */
async function assertRunnable(ctx: CoreContext, membership: Membership, path: string): Promise<void> {
  try {
    await getScriptByPath(ctx, membership, path);
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== "NOT_FOUND") throw error;
    const flow = await getFlow(ctx, membership, path).catch(() => null);
    if (!flow || flow.archived) throw error;
  }
}

/**
 * A token that runs one script (or flow) of one workspace, as its creator: the credential to give to
 * another system's webhook. Its value is returned once; only its hash is kept.
 */
export async function createWebhookToken(
  ctx: CoreContext,
  membership: Membership,
  input: NewWebhookTokenInput,
): Promise<string> {
  const { principal } = membership;
  requirePermission(membership, "job.run");
  if (principal.pathScope) throw new AppError("FORBIDDEN", "a webhook token cannot create tokens");
  refuseJobCredential(principal, "create tokens");
  if (principal.userId === SUPERADMIN_SECRET_PRINCIPAL.userId) {
    throw new AppError(
      "INVALID_INPUT",
      "SUPERADMIN_SECRET is not a user; sign in as a user to create tokens",
    );
  }
  // Only a script or flow the creator can see and run now; runs are checked again at each call.
  await assertRunnable(ctx, membership, input.path);
  if (input.label && input.label.length > 200) throw invalidInput("label", "at most 200 characters");
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) {
    throw invalidInput("expiration", "must be in the future");
  }
  const token = randomBytes(24).toString("base64url");
  const label = input.label?.trim() || `webhook ${input.path}`;
  await ctx.db.apiToken.create({
    data: {
      tokenHash: hashToken(token),
      tokenPrefix: token.slice(0, 10),
      label,
      kind: "webhook",
      userId: principal.userId,
      workspaceId: membership.workspace.id,
      scopePath: input.path,
      expiresAt: input.expiresAt ?? null,
    },
  });
  await recordAudit(ctx.pool, principal, {
    workspaceId: membership.workspace.id,
    operation: "webhooks.token.create",
    resource: input.path,
    parameters: { token_prefix: token.slice(0, 10), label, expiration: input.expiresAt ?? null },
  });
  return token;
}

/** Admins see every webhook token of the workspace, anyone else their own (see ownRowsOnly). */
function ownTokens(membership: Membership): { userId?: string } {
  const own = ownRowsOnly(membership, (role) => role === "admin");
  return own ? { userId: own.userId } : {};
}

/** The webhook tokens of one script or flow: the caller's own, or everyone's for an admin. */
export async function listWebhookTokens(
  ctx: CoreContext,
  membership: Membership,
  path: string,
): Promise<WebhookTokenView[]> {
  await assertRunnable(ctx, membership, path);
  const tokens = await ctx.db.apiToken.findMany({
    where: {
      kind: "webhook",
      workspaceId: membership.workspace.id,
      scopePath: path,
      ...ownTokens(membership),
      OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }],
    },
    include: { user: { select: { email: true } } },
    orderBy: { createdAt: "desc" },
  });
  return tokens.map((token) => ({
    tokenPrefix: token.tokenPrefix,
    label: token.label,
    path,
    ownerEmail: token.user.email,
    expiresAt: token.expiresAt,
    lastUsedAt: token.lastUsedAt,
    createdAt: token.createdAt,
  }));
}

/**
 * Revokes a webhook token of the workspace by its prefix: the caller's own, or any for an admin
 * (whether or not its script still exists).
 */
export async function revokeWebhookToken(
  ctx: CoreContext,
  membership: Membership,
  tokenPrefix: string,
): Promise<void> {
  const where = {
    kind: "webhook",
    workspaceId: membership.workspace.id,
    tokenPrefix,
    ...ownTokens(membership),
  };
  const token = await ctx.db.apiToken.findFirst({ where, select: { scopePath: true } });
  if (!token) throw notFound(`webhook token ${tokenPrefix}`);
  await ctx.db.apiToken.deleteMany({ where });
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId: membership.workspace.id,
    operation: "webhooks.token.delete",
    resource: token.scopePath,
    parameters: { token_prefix: tokenPrefix },
  });
}
