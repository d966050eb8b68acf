import type { User } from "@millrace/db";
import { recordAudit } from "../audit/index.ts";
import type { CoreContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { authenticate } from "../users.ts";

/** Refused because of too many attempts; `retryAfterSecs` goes into the Retry-After header. */
export class RateLimitedError extends AppError {
  readonly retryAfterSecs: number;

  constructor(message: string, retryAfterSecs: number) {
    super("LIMIT_EXCEEDED", message);
    this.retryAfterSecs = retryAfterSecs;
  }
}

export interface RateLimit {
  limit: number;
  windowSecs: number;
}

/** Failed sign-ins allowed per account and per address in a fixed window. */
export const SIGN_IN_LIMITS = {
  account: { limit: 10, windowSecs: 300 },
  ip: { limit: 50, windowSecs: 300 },
} satisfies Record<string, RateLimit>;

/**
 * Counts one attempt under `key` in a fixed window and says how long to wait when the count
 * passes the limit. One statement, so concurrent attempts on several servers all count.
 */
export async function hitRateLimit(
  ctx: CoreContext,
  key: string,
  { limit, windowSecs }: RateLimit,
): Promise<{ allowed: boolean; retryAfterSecs: number }> {
  const { rows } = await ctx.pool.query<{ count: number; retry_after: number }>(
    `INSERT INTO rate_limit (key, count, window_start) VALUES ($1, 1, now())
     ON CONFLICT (key) DO UPDATE SET
       count = CASE WHEN rate_limit.window_start <= now() - make_interval(secs => $2) THEN 1
                    ELSE rate_limit.count + 1 END,
       window_start = CASE WHEN rate_limit.window_start <= now() - make_interval(secs => $2) THEN now()
                           ELSE rate_limit.window_start END
     RETURNING count,
       GREATEST(1, CEIL(EXTRACT(EPOCH FROM window_start + make_interval(secs => $2) - now())))::int AS retry_after`,
    [key, windowSecs],
  );
  const row = rows[0]!;
  return { allowed: row.count <= limit, retryAfterSecs: row.retry_after };
}

/** Gives back an attempt that turned out fine, so that successful sign-ins never lock anyone out. */
async function refund(ctx: CoreContext, keys: string[]): Promise<void> {
  await ctx.pool.query(`UPDATE rate_limit SET count = GREATEST(count - 1, 0) WHERE key = ANY($1)`, [keys]);
}

/**
 * Checks an email and password with rate limiting per account and per address, and audits the
 * outcome (success or failure, with the address). Every attempt is counted up front, and refunded
 * when it succeeds: parallel guesses cannot slip past the limit.
 */
export async function signIn(
  ctx: CoreContext,
  input: { email: string; password: string; ip?: string | null },
): Promise<User> {
  const email = input.email.trim().toLowerCase();
  const keys = [`sign_in:account:${email}`, ...(input.ip ? [`sign_in:ip:${input.ip}`] : [])];
  const [account, ip] = await Promise.all([
    hitRateLimit(ctx, keys[0]!, SIGN_IN_LIMITS.account),
    input.ip
      ? hitRateLimit(ctx, keys[1]!, SIGN_IN_LIMITS.ip)
      : Promise.resolve({ allowed: true, retryAfterSecs: 0 }),
  ]);
  if (!account.allowed || !ip.allowed) {
    await recordAudit(ctx.pool, email, {
      workspaceId: null,
      operation: "users.login_failure",
      resource: email,
      parameters: { reason: "rate_limited" },
      ip: input.ip ?? null,
    });
    const wait = Math.max(account.allowed ? 0 : account.retryAfterSecs, ip.allowed ? 0 : ip.retryAfterSecs);
    throw new RateLimitedError(`too many sign-in attempts: try again in ${wait} seconds`, wait);
  }
  try {
    const user = await authenticate(ctx, email, input.password);
    await refund(ctx, keys);
    await recordAudit(ctx.pool, user.username, {
      workspaceId: null,
      operation: "users.login",
      resource: user.email,
      ip: input.ip ?? null,
    });
    return user;
  } catch (error) {
    if (error instanceof AppError && error.code === "UNAUTHORIZED") {
      await recordAudit(ctx.pool, email, {
        workspaceId: null,
        operation: "users.login_failure",
        resource: email,
        ip: input.ip ?? null,
      });
    }
    throw error;
  }
}

/** Forgets rate-limit windows that ended long ago (one row per account and address tried). */
export async function deleteStaleRateLimits(
  ctx: Pick<CoreContext, "pool">,
  olderThanSecs = 24 * 3600,
): Promise<number> {
  const { rowCount } = await ctx.pool.query(
    `DELETE FROM rate_limit WHERE window_start < now() - make_interval(secs => $1)`,
    [olderThanSecs],
  );
  return rowCount ?? 0;
}
