// Two keys of a worker group's config that shape the machine its jobs run on (docs/operations.md,
// "Custom runtimes and worker sizes"):
// - `worker_size`: memory per worker (fleet/worker-sizes.ts), the limit of the group's jobs;
// - `runtime_dirs`: folders of the group's image (a Python virtualenv, a folder of tools) that its
//   jobs see inside the sandbox, read-only, with their `bin` first on the PATH. Other groups'
//   jobs never see them, even on the same image.
import path from "node:path";
import { z } from "zod";
import {
  MAX_WORKER_SIZE_MB,
  MIN_WORKER_SIZE_MB,
  WORKER_SIZE_NAMES,
  type WorkerSize,
} from "../fleet/worker-sizes.ts";

export const workerSizeSchema = z.union(
  [
    z.enum(WORKER_SIZE_NAMES as [string, ...string[]]),
    z.number().int().min(MIN_WORKER_SIZE_MB).max(MAX_WORKER_SIZE_MB),
  ],
  {
    error: `must be small (1 GB), standard (2 GB), large (4 GB) or a whole number of MB from ${MIN_WORKER_SIZE_MB} to ${MAX_WORKER_SIZE_MB}`,
  },
) as z.ZodType<WorkerSize>;

// Folders that are the sandbox's own (system folders are already there, read-only; the job
// folder and /tmp are per job) or the host's secrets: never bound from a config.
const RESERVED = [
  "/",
  "/proc",
  "/dev",
  "/sys",
  "/tmp",
  "/run",
  "/var/run",
  "/root",
  "/home",
  "/etc",
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib64",
  "/var/lib/postgresql",
];

export const runtimeDirsSchema = z
  .array(
    z
      .string({ error: "must be a folder path" })
      .max(255, "is longer than 255 characters")
      .superRefine((dir, ctx) => {
        if (!path.isAbsolute(dir) || path.normalize(dir) !== dir || dir.endsWith("/"))
          ctx.addIssue({ code: "custom", message: `"${dir}" must be an absolute, normalized folder path` });
        else if (RESERVED.includes(dir) || dir.includes(":"))
          ctx.addIssue({ code: "custom", message: `"${dir}" cannot be a runtime folder` });
      }),
    { error: "must be a list of folder paths" },
  )
  .max(16, "at most 16 folders");

/** What a job's sandbox gets from its group's runtime folders. */
export interface RuntimeDirsEnv {
  readOnlyPaths: string[];
  /** Prepended to the job's PATH. */
  path: string[];
  /** Prepended to PYTHONPATH: a virtualenv's site-packages (the job runs the system python3). */
  pythonPath: string[];
}

/**
 * The folders to bind, the `bin` folders for PATH and a virtualenv's site-packages, for the
 * folders that exist on this worker (a missing one is reported by the worker at config load).
 */
export function runtimeDirsEnv(
  dirs: readonly string[],
  fs: { existsSync(p: string): boolean; readdirSync(p: string): string[] },
): RuntimeDirsEnv {
  const result: RuntimeDirsEnv = { readOnlyPaths: [], path: [], pythonPath: [] };
  for (const dir of dirs) {
    if (!fs.existsSync(dir)) continue;
    result.readOnlyPaths.push(dir);
    if (fs.existsSync(path.join(dir, "bin"))) result.path.push(path.join(dir, "bin"));
    const lib = path.join(dir, "lib");
    if (fs.existsSync(path.join(dir, "pyvenv.cfg")) && fs.existsSync(lib)) {
      for (const entry of fs.readdirSync(lib).sort()) {
        const site = path.join(lib, entry, "site-packages");
        if (entry.startsWith("python") && fs.existsSync(site)) result.pythonPath.push(site);
      }
    }
  }
  return result;
}
