import { recordAudit } from "../audit/index.ts";
import { createApiToken } from "../auth/tokens.ts";
import { refuseJobCredential, type Principal } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { requireMembership } from "../workspaces.ts";

export interface TokenView {
  tokenPrefix: string;
  label: string | null;
  kind: string;
  workspaceId: string | null;
  scopePath: string | null;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  createdAt: Date;
}

/** Kinds a user manages on their tokens page; webhook and job tokens belong to their features. */
const LISTED_KINDS = ["api", "session"];

function requireUser(principal: Principal): void {
  if (principal.username === "superadmin_secret") {
    throw new AppError(
      "INVALID_INPUT",
      "SUPERADMIN_SECRET is not a user; sign in as a user to manage tokens",
    );
  }
}

export async function listTokens(
  ctx: CoreContext,
  principal: Principal,
  options: { excludeEphemeral?: boolean } = {},
): Promise<TokenView[]> {
  requireUser(principal);
  const tokens = await ctx.db.apiToken.findMany({
    where: {
      userId: principal.userId,
      kind: { in: options.excludeEphemeral ? ["api"] : LISTED_KINDS },
      OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }],
    },
    orderBy: { createdAt: "desc" },
  });
  return tokens.map((t) => ({
    tokenPrefix: t.tokenPrefix,
    label: t.label,
    kind: t.kind,
    workspaceId: t.workspaceId,
    scopePath: t.scopePath,
    expiresAt: t.expiresAt,
    lastUsedAt: t.lastUsedAt,
    createdAt: t.createdAt,
  }));
}

export interface NewTokenInput {
  label?: string | null;
  expiresAt?: Date | null;
  /** Limits the token to one workspace the caller belongs to. */
  workspaceId?: string | null;
}

/** A new API token for the caller; its value is returned once and only its hash is kept. */
export async function createToken(
  ctx: CoreContext,
  principal: Principal,
  input: NewTokenInput,
): Promise<string> {
  requireUser(principal);
  refuseJobCredential(principal, "create tokens");
  if (input.workspaceId) {
    // A token may not reach further than its creator: scope only to a workspace they are in.
    await requireMembership(ctx, principal, input.workspaceId).catch((error: unknown) => {
      if (error instanceof AppError && error.code === "NOT_FOUND") {
        throw new AppError("NOT_FOUND", `workspace_id: no workspace ${input.workspaceId}`, "workspace_id");
      }
      throw error;
    });
  }
  if (input.label && input.label.length > 200) throw invalidInput("label", "at most 200 characters");
  const token = await createApiToken(ctx, principal, {
    label: input.label ?? null,
    expiresAt: input.expiresAt ?? null,
    workspaceId: input.workspaceId ?? null,
  });
  await recordAudit(ctx.pool, principal, {
    workspaceId: null,
    operation: "users.token.create",
    resource: token.slice(0, 10),
    parameters: { label: input.label ?? null, workspace_id: input.workspaceId ?? null },
  });
  return token;
}

/** Revokes one of the caller's tokens by its prefix (what lists show). */
export async function deleteToken(
  ctx: CoreContext,
  principal: Principal,
  tokenPrefix: string,
): Promise<void> {
  requireUser(principal);
  const { count } = await ctx.db.apiToken.deleteMany({ where: { userId: principal.userId, tokenPrefix } });
  if (count === 0) throw notFound(`token ${tokenPrefix}`);
  await recordAudit(ctx.pool, principal, {
    workspaceId: null,
    operation: "users.token.delete",
    resource: tokenPrefix,
  });
}

/** Drops tokens that expired more than a day ago (every sign-in leaves a session token behind). */
export async function deleteExpiredTokens(ctx: Pick<CoreContext, "pool">): Promise<number> {
  const { rowCount } = await ctx.pool.query(
    `DELETE FROM api_token WHERE expires_at < (now() AT TIME ZONE 'UTC') - interval '1 day'`,
  );
  return rowCount ?? 0;
}
