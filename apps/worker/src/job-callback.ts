import path from "node:path";
import { fileURLToPath } from "node:url";
import { resolveJobArgs, type ClaimedJob } from "@millrace/core";
import { createDb, type Db, type Pool } from "@millrace/db";
import { secretsOfJob } from "./job-secrets.ts";
import type { RunJobDeps } from "./run-job.ts";

export interface JobCallback {
  /** What the script sees: WM_TOKEN, BASE_INTERNAL_URL, WM_WORKSPACE, WM_JOB_ID, WM_STATE_PATH, … */
  env: Record<string, string>;
  /** The job's arguments with top-level `$var:`/`$res:` strings resolved. */
  args: Record<string, unknown>;
  /** Host paths the sandbox must expose read-only (the bundled clients). */
  readOnlyPaths: string[];
}

/**
 * The clients a job can import without installing anything, as on Windmill's workers:
 * `windmill-client` for bun (through NODE_PATH, after the job's own node_modules) and the `wmill`
 * module for python3 (through PYTHONPATH). Only these folders are bound into the sandbox.
 */
function bundledClients(): { nodePath: string; nodeClient: string; pythonPath: string } {
  const entry = fileURLToPath(import.meta.resolve("windmill-client"));
  let nodeClient = path.dirname(entry);
  while (path.basename(nodeClient) !== "windmill-client" && path.dirname(nodeClient) !== nodeClient)
    nodeClient = path.dirname(nodeClient);
  return {
    nodePath: path.dirname(nodeClient),
    nodeClient,
    pythonPath: fileURLToPath(new URL("../clients/python", import.meta.url)),
  };
}

let clients: ReturnType<typeof bundledClients> | undefined;

// Resolving `$var:`/`$res:` goes through core's authorization, which takes a Prisma client too;
// one per pool, made only when a job has references to resolve.
const dbs = new WeakMap<Pool, Db>();
function dbFor(pool: Pool): Db {
  let db = dbs.get(pool);
  if (!db) dbs.set(pool, (db = createDb(pool)));
  return db;
}

/**
 * Where windmill-client's getState/setState keep this script's state: a `state` resource under
 * the job user's own `u/<user>/`, one per script path.
 */
export function statePath(job: Pick<ClaimedJob, "permissionedAs" | "scriptPath">): string | null {
  if (!/^u\/[A-Za-z0-9_-]+$/.test(job.permissionedAs)) return null;
  return `${job.permissionedAs}/state/${job.scriptPath ?? "preview"}`;
}

/**
 * What a job needs to call Millrace back: its token (issued with its claim, revoked with its
 * completion: a short-lived token acting as the user the job is permissioned as, in the job's
 * workspace only), and its arguments with references resolved.
 */
export async function prepareCallback(deps: RunJobDeps, job: ClaimedJob): Promise<JobCallback> {
  clients ??= bundledClients();
  const token = job.callbackToken;
  const args = await resolveJobArgs(
    {
      pool: deps.pool,
      db: dbFor(deps.pool),
      secrets: deps.secrets,
      // Masked in the job's logs and result (see job-secrets.ts).
      onSecretRevealed: (value) => secretsOfJob(job.id)?.masker.add(value),
    },
    job.workspaceId,
    job.permissionedAs,
    job.args,
    job,
  );
  const state = statePath(job);
  return {
    env: {
      WM_WORKSPACE: job.workspaceId,
      WM_JOB_ID: job.id,
      WM_JOB_PATH: job.scriptPath ?? "",
      WM_PERMISSIONED_AS: job.permissionedAs,
      WM_USERNAME: job.createdBy,
      WM_BASE_URL: deps.baseUrl,
      BASE_URL: deps.baseUrl,
      BASE_INTERNAL_URL: deps.baseInternalUrl,
      ...(token ? { WM_TOKEN: token } : {}),
      ...(state ? { WM_STATE_PATH: state } : {}),
      NODE_PATH: clients.nodePath,
      PYTHONPATH: clients.pythonPath,
    },
    args,
    readOnlyPaths: [clients.nodeClient, clients.pythonPath],
  };
}
