import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AppError, type ClaimedJob } from "@millrace/core";
import { importsBundledClient, npmSchemeImports } from "@millrace/runtime";
import { secretsOfJob } from "./job-secrets.ts";
import type { RunJobDeps } from "./run-job-deps.ts";

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
function bundledClients(): {
  nodePath: string;
  nodeClient: string;
  nodeClientVersion: string;
  pythonPath: string;
} {
  const entry = fileURLToPath(import.meta.resolve("windmill-client"));
  let nodeClient = path.dirname(entry);
  while (path.basename(nodeClient) !== "windmill-client" && path.dirname(nodeClient) !== nodeClient)
    nodeClient = path.dirname(nodeClient);
  const { version } = JSON.parse(readFileSync(path.join(nodeClient, "package.json"), "utf8")) as {
    version: string;
  };
  return {
    nodePath: path.dirname(nodeClient),
    nodeClient,
    nodeClientVersion: version,
    pythonPath: fileURLToPath(new URL("../clients/python", import.meta.url)),
  };
}

let clients: ReturnType<typeof bundledClients> | undefined;

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
  const args = await deps.store
    // Masked in the job's logs and result (see job-secrets.ts).
    .resolveArgs(job, (value) => secretsOfJob(job.id)?.masker.add(value))
    .catch((error: unknown) => {
      // What the job's user may not read is "not found" (its existence is not told): say whose view.
      if (error instanceof AppError && error.code === "NOT_FOUND")
        throw new AppError(
          error.code,
          `${error.message} or not visible to ${job.permissionedAs}`,
          error.field,
        );
      throw error;
    });
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

/** A deno job's node_modules: where its packages are, and the folder the sandbox must expose. */
export interface DenoModules {
  nodeModulesDir: string;
  readOnlyPaths: string[];
}

/**
 * A node_modules folder holding `packages`' entries (links) and windmill-client (a link to the
 * bundled copy): one per source folder, made once (atomically) under `root`, read-only to jobs.
 */
function modulesWithClient(root: string, clientDir: string, packages: string | undefined): string {
  const key = createHash("sha256")
    .update(`${clientDir}\0${packages ?? ""}`)
    .digest("hex")
    .slice(0, 24);
  const dir = path.join(root, "clients", `deno-${key}`);
  const modules = path.join(dir, "node_modules");
  if (existsSync(modules)) return modules;
  const temp = `${dir}.${process.pid}.${randomBytes(4).toString("hex")}`;
  try {
    mkdirSync(path.join(temp, "node_modules"), { recursive: true });
    const entries = packages ? readdirSync(packages) : [];
    for (const name of entries)
      symlinkSync(path.join(packages!, name), path.join(temp, "node_modules", name));
    if (!entries.includes("windmill-client"))
      symlinkSync(clientDir, path.join(temp, "node_modules", "windmill-client"));
    renameSync(temp, dir);
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    // Another worker process made it first.
    if (!existsSync(modules)) throw error;
  }
  return modules;
}

/**
 * deno resolves `npm:windmill-client` (and a bare `windmill-client`) from the job's node_modules
 * (`--node-modules-dir=manual`, which executeJob sets when it is given one) instead of the
 * registry: the bundled copy, offline, beside the packages the script's lock installed. A script
 * that also imports other `npm:` packages without a lock keeps deno's own download of them
 * (and of windmill-client, from the registry, as on Windmill); so does one that asks for a
 * windmill-client version the bundle does not satisfy.
 */
export function denoModules(
  cacheRoot: string,
  content: string,
  installed: string | undefined,
): DenoModules | null {
  clients ??= bundledClients();
  if (!importsBundledClient(content, clients.nodeClientVersion)) return null;
  if (!installed && npmSchemeImports(content).some((name) => name !== "windmill-client")) return null;
  const nodeModulesDir = modulesWithClient(cacheRoot, clients.nodeClient, installed);
  // The links' targets must be visible in the sandbox too.
  return {
    nodeModulesDir,
    readOnlyPaths: [path.dirname(nodeModulesDir), clients.nodeClient, ...(installed ? [installed] : [])],
  };
}
