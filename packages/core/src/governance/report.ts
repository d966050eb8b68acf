import type { Principal } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { requireSuperadmin } from "../instance-admin.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";

export const STALE_SCRIPT_DAYS = 180;
export const RUNS_WINDOW_DAYS = 30;

export type GovernanceWarning = "no_admin" | "single_admin";

export interface WorkspaceGovernance {
  id: string;
  name: string;
  members: number;
  /** Active admins (a disabled membership or account does not count). */
  admins: { username: string; email: string }[];
  scripts: number;
  flows: number;
  schedules: number;
  runsLast30Days: number;
  warnings: GovernanceWarning[];
  /** Scripts whose latest version is older than STALE_SCRIPT_DAYS. */
  staleScripts: { path: string; lastDeployedAt: Date }[];
  /**
   * Tags this workspace's scripts and flows' inline steps carry (their own, else their language's)
   * or its jobs ran on.
   */
  tags: string[];
}

export interface GovernanceReport {
  generatedAt: Date;
  staleScriptDays: number;
  runsWindowDays: number;
  workspaces: WorkspaceGovernance[];
  /** tag → the workspaces that use it. */
  tags: Record<string, string[]>;
}

function bump<K>(map: Map<K, number>, key: K, by = 1) {
  map.set(key, (map.get(key) ?? 0) + by);
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** One pass over the instance (or the listed workspaces): a handful of grouped queries. */
async function buildReport(ctx: CoreContext, only: string[] | null): Promise<GovernanceReport> {
  const ids = only ?? null;
  const [workspaces, members, scripts, schedules, jobs, flows] = await Promise.all([
    ctx.pool.query<{ id: string; name: string }>(
      `SELECT id, name FROM workspace WHERE NOT deleted AND ($1::text[] IS NULL OR id = ANY($1)) ORDER BY id`,
      [ids],
    ),
    ctx.pool.query<{ workspace_id: string; username: string; email: string; role: string; active: boolean }>(
      `SELECT m.workspace_id, u.username, u.email, m.role::text AS role, NOT (m.disabled OR u.disabled) AS active
         FROM workspace_member m JOIN "user" u ON u.id = m.user_id
        WHERE $1::text[] IS NULL OR m.workspace_id = ANY($1)
        ORDER BY u.username`,
      [ids],
    ),
    ctx.pool.query<{ workspace_id: string; path: string; created_at: Date; tag: string }>(
      `SELECT DISTINCT ON (workspace_id, path) workspace_id, path, created_at, COALESCE(tag, language) AS tag
         FROM script
        WHERE NOT archived AND ($1::text[] IS NULL OR workspace_id = ANY($1))
        ORDER BY workspace_id, path, created_at DESC`,
      [ids],
    ),
    ctx.pool.query<{ workspace_id: string; n: number }>(
      `SELECT workspace_id, count(*)::int AS n FROM schedule
        WHERE $1::text[] IS NULL OR workspace_id = ANY($1) GROUP BY workspace_id`,
      [ids],
    ),
    ctx.pool.query<{ workspace_id: string; tag: string; n: number }>(
      `SELECT workspace_id, tag, count(*)::int AS n FROM job
        WHERE created_at > (now() AT TIME ZONE 'UTC') - make_interval(days => $2)
          AND ($1::text[] IS NULL OR workspace_id = ANY($1))
        GROUP BY workspace_id, tag`,
      [ids, RUNS_WINDOW_DAYS],
    ),
    // Deployed flows and the tags their inline steps run on (their own, else their language's).
    ctx.pool.query<{ workspace_id: string; tags: string[] }>(
      `SELECT f.workspace_id,
              ARRAY(SELECT DISTINCT COALESCE(NULLIF(m.value->>'tag', ''), m.value->>'language')
                      FROM jsonb_path_query(f.value, 'strict $.** ? (@.type == "rawscript")') AS m(value)
                     WHERE m.value->>'language' IS NOT NULL) AS tags
         FROM flow f
        WHERE NOT f.archived AND ($1::text[] IS NULL OR f.workspace_id = ANY($1))`,
      [ids],
    ),
  ]);
  const staleBefore = Date.now() - STALE_SCRIPT_DAYS * 24 * 3600 * 1000;
  const memberCount = new Map<string, number>();
  const admins = new Map<string, { username: string; email: string }[]>();
  for (const m of members.rows) {
    bump(memberCount, m.workspace_id);
    if (m.role === "admin" && m.active)
      push(admins, m.workspace_id, { username: m.username, email: m.email });
  }
  const scriptCount = new Map<string, number>();
  const stale = new Map<string, { path: string; lastDeployedAt: Date }[]>();
  const tags = new Map<string, Set<string>>();
  const tagOf = (ws: string) => tags.get(ws) ?? tags.set(ws, new Set()).get(ws)!;
  for (const s of scripts.rows) {
    bump(scriptCount, s.workspace_id);
    tagOf(s.workspace_id).add(s.tag);
    if (s.created_at.getTime() < staleBefore)
      push(stale, s.workspace_id, { path: s.path, lastDeployedAt: s.created_at });
  }
  const runs = new Map<string, number>();
  for (const j of jobs.rows) {
    bump(runs, j.workspace_id, j.n);
    tagOf(j.workspace_id).add(j.tag);
  }
  const scheduleCount = new Map(schedules.rows.map((r) => [r.workspace_id, r.n]));
  const flowCount = new Map<string, number>();
  for (const f of flows.rows) {
    bump(flowCount, f.workspace_id);
    for (const tag of f.tags) tagOf(f.workspace_id).add(tag);
  }
  const report: WorkspaceGovernance[] = workspaces.rows.map((w) => {
    const wsAdmins = admins.get(w.id) ?? [];
    const warnings: GovernanceWarning[] = [];
    if (wsAdmins.length === 0) warnings.push("no_admin");
    if (wsAdmins.length === 1) warnings.push("single_admin");
    return {
      id: w.id,
      name: w.name,
      members: memberCount.get(w.id) ?? 0,
      admins: wsAdmins,
      scripts: scriptCount.get(w.id) ?? 0,
      flows: flowCount.get(w.id) ?? 0,
      schedules: scheduleCount.get(w.id) ?? 0,
      runsLast30Days: runs.get(w.id) ?? 0,
      warnings,
      staleScripts: stale.get(w.id) ?? [],
      tags: [...(tags.get(w.id) ?? [])].sort(),
    };
  });
  const byTag: Record<string, string[]> = {};
  for (const ws of report) for (const tag of ws.tags) (byTag[tag] ??= []).push(ws.id);
  return {
    generatedAt: new Date(),
    staleScriptDays: STALE_SCRIPT_DAYS,
    runsWindowDays: RUNS_WINDOW_DAYS,
    workspaces: report,
    tags: Object.fromEntries(Object.entries(byTag).sort(([a], [b]) => a.localeCompare(b))),
  };
}

/** Every workspace of the instance: superadmins only. */
export async function instanceGovernance(ctx: CoreContext, principal: Principal): Promise<GovernanceReport> {
  requireSuperadmin(principal, "read the governance report of every workspace");
  return buildReport(ctx, null);
}

/** The same report for one workspace, for its admins. */
export async function workspaceGovernance(
  ctx: CoreContext,
  membership: Membership,
): Promise<GovernanceReport> {
  requirePermission(membership, "governance.read");
  return buildReport(ctx, [membership.workspace.id]);
}
