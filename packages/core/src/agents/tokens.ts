import { randomBytes } from "node:crypto";
import { prepared, withTransaction, type Pool } from "@millrace/db";
import type { Principal } from "../auth/principal.ts";
import { hashToken } from "../auth/tokens.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput } from "../errors.ts";
import { auditInstanceChange, requireSuperadmin } from "../instance-admin.ts";
import { validateTag } from "../jobs/tags.ts";

/**
 * Agent tokens start with this, so that a leaked one is recognised (and an operator who pastes
 * one where an API token goes learns why it is refused).
 */
export const AGENT_TOKEN_PREFIX = "mr_agent_";
const GROUP = /^[A-Za-z0-9_-]{1,50}$/;
const MAX_TAGS = 100;

/** Who an agent worker is: what its token grants, and nothing more. */
export interface AgentIdentity {
  tokenId: string;
  workerGroup: string;
  tags: string[];
  /** Every worker name of this agent starts with it (see agentNamePrefix). */
  namePrefix: string;
}

/**
 * Worker names an agent may use: `ag-<first 8 hex digits of its token's id>-`. The server checks
 * every name an agent sends against it, so one agent can neither ping for nor complete the jobs
 * of another (nor of a database worker). The token id, not its value, goes into names: worker
 * names are shown on the Workers page.
 */
export function agentNamePrefix(tokenId: string): string {
  return `ag-${tokenId.replaceAll("-", "").slice(0, 8)}-`;
}

export interface CreateAgentTokenInput {
  workerGroup: string;
  tags: string[];
  /** Expiry, in seconds since the epoch (Windmill's `exp`). */
  exp: number;
}

/** Windmill's create_agent_token: superadmins only; the plain token is answered once. */
export async function createAgentToken(
  ctx: CoreContext,
  principal: Principal,
  input: CreateAgentTokenInput,
): Promise<string> {
  requireSuperadmin(principal, "create agent worker tokens");
  if (!GROUP.test(input.workerGroup))
    throw invalidInput("worker_group", "use letters, digits, _ and - (at most 50)");
  if (input.tags.length === 0) throw invalidInput("tags", "name at least one tag the agent serves");
  if (input.tags.length > MAX_TAGS) throw invalidInput("tags", `at most ${MAX_TAGS} tags`);
  // Static tags only: an agent serves queues, and `$workspace` is resolved before a job is queued.
  input.tags.forEach((tag, i) => {
    validateTag(tag, `tags.${i}`);
    if (tag.includes("$"))
      throw invalidInput(`tags.${i}`, "an agent serves plain tags (no $workspace, $args)");
  });
  const expiresAt = new Date(input.exp * 1000);
  if (!Number.isFinite(expiresAt.getTime()) || expiresAt.getTime() <= Date.now())
    throw invalidInput("exp", "must be a time in the future, in seconds since 1970-01-01 UTC");
  const token = `${AGENT_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  const tags = [...new Set(input.tags)];
  await withTransaction(ctx.pool, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO agent_token (id, token_hash, token_prefix, worker_group, tags, expires_at, created_by)
       VALUES (gen_random_uuid(), $1, $2, $3, $4, to_timestamp($5) AT TIME ZONE 'UTC', $6) RETURNING id`,
      [
        hashToken(token),
        token.slice(0, AGENT_TOKEN_PREFIX.length + 6),
        input.workerGroup,
        tags,
        expiresAt.getTime() / 1000,
        principal.username,
      ],
    );
    // Never the token itself: the audit log is readable by admins.
    await auditInstanceChange(client, principal, "agent_workers.create_token", rows[0]!.id, {
      worker_group: input.workerGroup,
      tags,
      expires_at: expiresAt.toISOString(),
    });
  });
  return token;
}

/**
 * Windmill's blacklist_token: the token stops working at once, for every route (its agent's next
 * call is refused; the jobs it runs then become zombies, as if it had died).
 */
export async function revokeAgentToken(ctx: CoreContext, principal: Principal, token: string): Promise<void> {
  requireSuperadmin(principal, "revoke agent worker tokens");
  await withTransaction(ctx.pool, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      `UPDATE agent_token SET revoked_at = COALESCE(revoked_at, now() AT TIME ZONE 'UTC')
        WHERE token_hash = $1 RETURNING id`,
      [hashToken(token)],
    );
    if (!rows[0]) throw new AppError("NOT_FOUND", "no such agent token");
    await auditInstanceChange(client, principal, "agent_workers.revoke_token", rows[0].id, null);
  });
}

export interface AgentTokenSummary {
  id: string;
  token_prefix: string;
  worker_group: string;
  tags: string[];
  expires_at: string;
  revoked_at: string | null;
  created_by: string;
  created_at: string;
}

/** Every agent token (never the token: its first characters), newest first. */
export async function listAgentTokens(ctx: CoreContext, principal: Principal): Promise<AgentTokenSummary[]> {
  requireSuperadmin(principal, "list agent worker tokens");
  const { rows } = await ctx.pool.query<AgentTokenSummary>(
    `SELECT id, token_prefix, worker_group, tags,
            to_char(expires_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS expires_at,
            to_char(revoked_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS revoked_at, created_by,
            to_char(created_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at
       FROM agent_token ORDER BY created_at DESC`,
  );
  return rows;
}

/**
 * The agent a bearer token belongs to, or UNAUTHORIZED: unknown, expired and revoked tokens are
 * refused alike. Only the agent routes call this; every other route resolves tokens from
 * api_token, where agent tokens are not, so it refuses them (401) without a special case.
 */
export async function agentFromToken(pool: Pool, token: string | null): Promise<AgentIdentity> {
  if (!token?.startsWith(AGENT_TOKEN_PREFIX))
    throw new AppError("UNAUTHORIZED", "an agent worker token is required (AGENT_TOKEN)");
  // Times compared in SQL: the columns hold UTC without a zone (see BEARER_COLUMNS).
  const { rows } = await pool.query<{ id: string; worker_group: string; tags: string[] }>(
    prepared(
      `SELECT id, worker_group, tags FROM agent_token
        WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > localtimestamp`,
      [hashToken(token)],
    ),
  );
  const row = rows[0];
  if (!row) throw new AppError("UNAUTHORIZED", "invalid, expired or revoked agent token");
  return {
    tokenId: row.id,
    workerGroup: row.worker_group,
    tags: row.tags,
    namePrefix: agentNamePrefix(row.id),
  };
}
