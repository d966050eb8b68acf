import {
  listFlows,
  listJobs,
  listResources,
  listSchedules,
  listScripts,
  listVariables,
} from "@millrace/core";
import { router, workspaceProcedure } from "../init.ts";

/** Items per kind the command palette gets: it filters them in the browser. */
export const PALETTE_CAP = 500;
/** Recent runs the palette offers. */
export const PALETTE_RUNS = 10;

/**
 * What the command palette can jump to in a workspace: scripts, flows, schedules, resources,
 * variables and the latest runs, each list read through core's list functions, so it holds only what the
 * caller may read (role and folder rights).
 */
export const searchRouter = router({
  palette: workspaceProcedure.query(async ({ ctx }) => {
    const { services, membership } = ctx;
    const [scripts, flows, schedules, resources, variables, runs] = await Promise.all([
      listScripts(services, membership, { perPage: PALETTE_CAP }),
      listFlows(services, membership, { perPage: PALETTE_CAP }),
      listSchedules(services, membership, { perPage: PALETTE_CAP }),
      listResources(services, membership, { perPage: PALETTE_CAP }),
      listVariables(services, membership, { perPage: PALETTE_CAP }),
      listJobs(services, membership, { perPage: PALETTE_RUNS }),
    ]);
    return {
      role: membership.role,
      scripts: scripts.map((s) => ({ path: s.path, summary: s.summary, language: s.language })),
      flows: flows.map((f) => ({ path: f.path, summary: f.summary })),
      schedules: schedules.map((s) => ({ path: s.path, scriptPath: s.scriptPath, enabled: s.enabled })),
      resources: resources.map((r) => ({ path: r.path, resourceType: r.resourceType })),
      variables: variables.map((v) => ({ path: v.path, isSecret: v.isSecret })),
      runs: runs.map((j) => ({
        id: j.id,
        scriptPath: j.scriptPath,
        kind: j.kind,
        status: j.status,
        createdAt: j.createdAt.toISOString(),
      })),
    };
  }),
});
