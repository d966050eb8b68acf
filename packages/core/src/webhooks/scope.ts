import { AppError } from "../errors.ts";
import type { Principal } from "../auth/principal.ts";

/** The only calls a webhook token may make: running a script or flow by path, async or waiting. */
const WEBHOOK_RUN_ROUTE = /^\/api\/w\/[^/]+\/jobs\/(?:run|run_wait_result)\/[pf]\/.+$/;

/**
 * A webhook token (a token scoped to one script path) is a credential to hand to other systems:
 * it runs that one script and nothing else. Every other route, REST or tRPC, refuses it here,
 * before any handler runs; running another path is refused by runScriptByPath.
 */
export function assertCallAllowed(principal: Principal, method: string, pathname: string): void {
  if (!principal.pathScope) return;
  if (method === "POST" && WEBHOOK_RUN_ROUTE.test(pathname)) return;
  throw new AppError(
    "FORBIDDEN",
    `this is a webhook token for ${principal.pathScope}: it may only run it (POST …/jobs/run/p/${principal.pathScope}, or …/jobs/run/f/${principal.pathScope} for a flow)`,
  );
}

export const WEBHOOK_SCOPE_PREFIX = "run:script/";
/** The same scope for a flow's webhook. */
export const FLOW_WEBHOOK_SCOPE_PREFIX = "run:flow/";

/** Windmill's token scope for a script webhook (`run:script/<path>`). */
export function webhookScope(path: string): string {
  return `${WEBHOOK_SCOPE_PREFIX}${path}`;
}

/**
 * The script path a list of Windmill token scopes limits a token to, or null when the list holds
 * no webhook scope. Scopes this version does not know are refused rather than ignored: ignoring
 * one would hand out a token with more rights than asked for.
 */
export function scopePathOf(scopes: unknown): string | null {
  if (scopes === undefined || scopes === null) return null;
  if (!Array.isArray(scopes) || scopes.some((scope) => typeof scope !== "string")) {
    throw new AppError("INVALID_INPUT", "scopes: must be a list of strings", "scopes");
  }
  if (scopes.length === 0) return null;
  const paths = (scopes as string[]).map((scope) => {
    if (scope.startsWith(FLOW_WEBHOOK_SCOPE_PREFIX)) return scope.slice(FLOW_WEBHOOK_SCOPE_PREFIX.length);
    if (!scope.startsWith(WEBHOOK_SCOPE_PREFIX)) {
      throw new AppError(
        "INVALID_INPUT",
        `scopes: unsupported scope "${scope}" (only run:script/<path> or run:flow/<path>)`,
        "scopes",
      );
    }
    return scope.slice(WEBHOOK_SCOPE_PREFIX.length);
  });
  if (new Set(paths).size > 1) {
    throw new AppError("INVALID_INPUT", "scopes: a token may be scoped to one script only", "scopes");
  }
  return paths[0]!;
}
