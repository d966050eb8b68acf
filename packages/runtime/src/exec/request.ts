// What executeJob takes and answers, as types of their own: execute.ts runs jobs with them, and
// the runners it hands a job to (postgresql.ts) take them without importing execute.ts back.
import type { Language } from "../languages.ts";
import type { ProcessLauncher } from "./launcher.ts";
import type { JobLimits } from "./limits.ts";
import type { WarmSandboxes } from "./warm-sandbox.ts";

export interface ExecuteRequest {
  jobId: string;
  language: Language;
  content: string;
  args: Record<string, unknown>;
  argOrder: string[];
  env: Record<string, string>;
  /** Host paths the job may read (dependency caches); exposed read-only inside the sandbox. */
  readOnlyPaths?: string[];
  /** Folders put before the system ones on the job's PATH (a worker group's runtime folders). */
  pathPrefix?: string[];
  /** bun/deno: installed packages, linked as the job folder's node_modules (list it in readOnlyPaths too). */
  nodeModulesDir?: string;
  /**
   * A folder the job sees as `./shared`, writable, that outlives it: the steps of a same_worker
   * flow share it (Windmill's `./shared`). Such a job never takes a warm sandbox (no bind there).
   */
  sharedDir?: string;
  workRoot: string;
  timeoutMs: number;
  /** The job is killed, and fails saying it ran out of memory, past this resident size. */
  memoryLimitMb?: number | null;
  /**
   * A result (file) larger than this fails the job with `ResultTooLarge`, unread: the worker must
   * not load whatever a job wrote into memory, nor the database store it.
   */
  maxResultBytes?: number;
  /** Defaults in DEFAULT_LIMITS; they apply with or without the sandbox. */
  limits?: Partial<JobLimits>;
  /** Run in bubblewrap when it is available (default true); false only for trusted setups. */
  sandbox?: boolean;
  /** False cuts the job off the network (needs the sandbox). Default true. */
  network?: boolean;
  signal?: AbortSignal;
  onLog(chunk: string): void;
  /** Start the job's process from this launcher (the worker's), not from the calling process. */
  launcher?: ProcessLauncher | null;
  /** Sandboxes set up ahead of their jobs (the worker's); a job takes one when its spec has one. */
  warmSandboxes?: WarmSandboxes | null;
  /**
   * Jobs of the same key may run one after the other in one warm sandbox, which its stub cleans
   * between them (see warm-sandbox.ts): the worker gives one key to runs of the same code by the
   * same user in the same workspace only, never to jobs that could learn what the others may
   * not. Without it the job's sandbox serves it alone.
   */
  reuseKey?: string;
}

export type ExecuteOutcome =
  | { status: "success"; result: unknown }
  | { status: "failure"; error: { name: string; message: string; stack?: string } }
  | { status: "canceled" };
