import { hash, randomBytes, timingSafeEqual } from "node:crypto";
import { prepared } from "@millrace/db";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput } from "../errors.ts";
import type { Principal } from "./principal.ts";

export type TokenKind = "api" | "session" | "webhook";

export function hashToken(token: string): string {
  // One-shot hash: a completion hashes a token per job, ~4x cheaper than createHash's object.
  return hash("sha256", token, "hex");
}

/** `hashToken` in SQL, of the text expression `token` (job tokens are made in the claim). */
export function hashTokenSql(token: string): string {
  return `encode(sha256(convert_to(${token}, 'UTF8')), 'hex')`;
}

function newTokenValue(): string {
  return randomBytes(24).toString("base64url");
}

export interface CreateTokenInput {
  label?: string | null;
  expiresAt?: Date | null;
  workspaceId?: string | null;
  kind?: TokenKind;
}

/** Creates a token for the principal's user; the plain value is returned once and never stored. */
export async function createApiToken(
  ctx: CoreContext,
  principal: Principal,
  input: CreateTokenInput,
): Promise<string> {
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) {
    throw invalidInput("expiration", "must be in the future");
  }
  if (input.label && input.label.length > 200) throw invalidInput("label", "at most 200 characters");
  const token = newTokenValue();
  await ctx.db.apiToken.create({
    data: {
      tokenHash: hashToken(token),
      tokenPrefix: token.slice(0, 10),
      label: input.label ?? null,
      kind: input.kind ?? "api",
      userId: principal.userId,
      workspaceId: input.workspaceId ?? principal.workspaceScope ?? null,
      expiresAt: input.expiresAt ?? null,
    },
  });
  return token;
}

export async function revokeApiToken(ctx: CoreContext, token: string): Promise<void> {
  await ctx.db.apiToken.deleteMany({ where: { tokenHash: hashToken(token) } });
}

export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The built-in principal for `SUPERADMIN_SECRET`, as in Windmill: superadmin on the API. */
export const SUPERADMIN_SECRET_PRINCIPAL: Principal = {
  userId: "00000000-0000-0000-0000-000000000000",
  email: "superadmin_secret@millrace.local",
  username: "superadmin_secret",
  isSuperAdmin: true,
  tokenKind: "secret",
};

/**
 * The columns (and join) that resolve a token to its principal. Times are compared in SQL: the
 * columns hold UTC without a zone (the session's zone is UTC), which node-postgres would read in
 * the process's local zone.
 */
export const BEARER_COLUMNS = `t.id AS token_id, t.kind AS token_kind, t.workspace_id AS token_workspace_id,
            t.scope_path AS token_scope_path, t.bounded_by AS token_bounded_by,
            CASE WHEN t.kind = 'job' AND t.label LIKE 'job %' THEN substr(t.label, 5) END AS token_job_id,
            coalesce(t.expires_at <= localtimestamp, false) AS token_expired,
            coalesce(t.last_used_at < localtimestamp - interval '1 minute', true) AS token_touch,
            u.id AS user_id, u.email, u.username, u.is_super_admin, u.disabled AS user_disabled`;
export const BEARER_FROM = `api_token t JOIN "user" u ON u.id = t.user_id`;

export interface BearerRow {
  token_id: string;
  token_kind: string;
  token_workspace_id: string | null;
  token_scope_path: string | null;
  /** Usernames whose rights bound a job token's (see Principal.boundedBy). */
  token_bounded_by: string[] | null;
  /** A job token's job (its label is `job <id>`, see issueJobTokensSql). */
  token_job_id: string | null;
  token_expired: boolean;
  token_touch: boolean;
  user_id: string;
  email: string;
  username: string;
  is_super_admin: boolean;
  user_disabled: boolean;
}

/**
 * The principal of a bearer token's row (BEARER_COLUMNS), or UNAUTHORIZED. Expired tokens,
 * tokens of disabled users and unknown tokens are all refused the same way.
 */
export function principalOfBearerRow(ctx: CoreContext, row: BearerRow | undefined): Principal {
  if (!row || row.user_disabled || row.token_expired) {
    throw new AppError("UNAUTHORIZED", "invalid or expired token");
  }
  // At most one write a minute per token, off the request's path: the tokens page shows it.
  if (row.token_touch) {
    void ctx.pool
      .query("UPDATE api_token SET last_used_at = now() WHERE id = $1", [row.token_id])
      .catch(() => {});
  }
  // A job's token is never a superadmin, even when its user is: it is limited to its workspace,
  // where a superadmin's job is admin (adminOfScope).
  const job = row.token_kind === "job";
  return {
    userId: row.user_id,
    email: row.email,
    username: row.username,
    isSuperAdmin: row.is_super_admin && !job,
    ...(job && row.is_super_admin ? { adminOfScope: true } : {}),
    ...(row.token_workspace_id ? { workspaceScope: row.token_workspace_id } : {}),
    ...(row.token_scope_path ? { pathScope: row.token_scope_path } : {}),
    ...(job && row.token_job_id ? { jobId: row.token_job_id } : {}),
    tokenKind: row.token_kind,
  };
}

/**
 * The users a job token's rights are bounded by (Principal.boundedBy), looked up by username:
 * each with the same limits as the token (its workspace, no superadmin rights). A bounding user
 * who no longer exists or is disabled has no rights, so neither has the token. Scripts deployed
 * with SUPERADMIN_SECRET (`superadmin_secret`, no account) bound nothing: the instance's own secret
 * holder wrote them.
 */
export async function withBounds(
  ctx: CoreContext,
  principal: Principal,
  usernames: readonly string[] | null | undefined,
): Promise<Principal> {
  const names = [...new Set(usernames ?? [])].filter((name) => name !== principal.username);
  if (names.length === 0) return principal;
  const { rows } = await ctx.pool.query<{
    id: string;
    email: string;
    username: string;
    is_super_admin: boolean;
    disabled: boolean;
  }>('SELECT id, email, username, is_super_admin, disabled FROM "user" WHERE username = ANY($1)', [names]);
  const boundedBy: Principal[] = [];
  for (const name of names) {
    const user = rows.find((row) => row.username === name);
    if (!user && name === SUPERADMIN_SECRET_PRINCIPAL.username) continue;
    if (!user || user.disabled) {
      throw new AppError(
        "FORBIDDEN",
        `this job runs code deployed by ${name}, who is no longer an active user: its token may do nothing`,
      );
    }
    boundedBy.push({
      userId: user.id,
      email: user.email,
      username: user.username,
      isSuperAdmin: false,
      ...(user.is_super_admin ? { adminOfScope: true } : {}),
      ...(principal.workspaceScope ? { workspaceScope: principal.workspaceScope } : {}),
      tokenKind: principal.tokenKind,
    });
  }
  return boundedBy.length ? { ...principal, boundedBy } : principal;
}

/** Resolves `Authorization: Bearer <token>` to a principal, or throws UNAUTHORIZED. */
export async function principalFromBearer(
  ctx: CoreContext,
  token: string,
  superadminSecret: string | undefined,
): Promise<Principal> {
  if (superadminSecret && sameSecret(token, superadminSecret)) return SUPERADMIN_SECRET_PRINCIPAL;
  // Raw SQL: every bearer request starts here (Prisma's query engine costs a few ms per query).
  const { rows } = await ctx.pool.query<BearerRow>(
    prepared(`SELECT ${BEARER_COLUMNS} FROM ${BEARER_FROM} WHERE t.token_hash = $1`, [hashToken(token)]),
  );
  const principal = principalOfBearerRow(ctx, rows[0]);
  return rows[0]?.token_bounded_by?.length ? withBounds(ctx, principal, rows[0].token_bounded_by) : principal;
}
