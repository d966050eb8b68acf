// What a job is made of when it is enqueued, as types of their own: enqueue.ts writes jobs from
// them, and what enqueue.ts calls (dependency locks, dedicated routing, the claimed row) reads them
// without importing enqueue.ts back.
import type { Language } from "@millrace/runtime";
import type { AuditEntry } from "../audit/index.ts";
import type { Principal } from "../auth/principal.ts";

/** `noop` jobs run no code: they return their args (after `sleep_ms`), for benchmarks and tests. */
export type JobKind =
  | "script"
  | "preview"
  | "noop"
  | "dependency"
  | "init_script"
  | "periodic_script"
  // A flow run and a flow preview: no worker runs them, the flow engine advances them.
  | "flow"
  | "flowpreview"
  // An inline (rawscript) step of a flow.
  | "flowscript"
  // The locks of a flow's inline steps (flows/dependencies.ts).
  | "flowdependencies";

export interface RetryPolicy {
  constant?: { attempts: number; seconds: number };
  exponential?: { attempts: number; multiplier: number; seconds: number; random_factor?: number };
}

export interface JobLimitsInput {
  timeoutSecs: number;
  memoryLimitMb: number | null;
  /** Resolved key (workspace-prefixed), limit and window; null when the job has no limit. */
  concurrency: { key: string; limit: number; windowSecs: number } | null;
  retry: RetryPolicy | null;
}

export interface EnqueueInput extends JobLimitsInput {
  workspaceId: string;
  kind: JobKind;
  scriptPath: string | null;
  scriptHash: string | null;
  language: Language;
  content: string;
  args: Record<string, unknown>;
  argOrder: string[];
  /** Already resolved (no `$workspace` / `$args[…]` left). */
  tag: string;
  priority: number;
  scheduledFor: Date | null;
  createdBy: string;
  permissionedAs: string;
  /**
   * Usernames whose rights bound the job's besides `permissionedAs` (job.bounded_by): the deployer
   * of the version it runs, and the users bounding the job's token that started it, if any. Its
   * WM_TOKEN and `$var:` arguments act with the intersection of their rights.
   */
  boundedBy?: string[];
  /** The script version's dependency lock; filled in at enqueue (see attachLocks). */
  lock?: string | null;
  /** The schedule whose tick created the job (its page lists the schedule's runs). */
  schedulePath?: string | null;
  /** The script version asks for dedicated workers (script.dedicated_worker): see dedicated.ts. */
  dedicatedWorker?: boolean;
  /** A step of a flow: the flow job, the flow at the root of the run, and the step's id. */
  parentJobId?: string | null;
  rootJobId?: string | null;
  flowStepId?: string | null;
  /**
   * The audit entry of the request that created the job, written by the same statement as the
   * job (its parameters get the job's id as `job_id`).
   */
  audit?: { actor: Principal | string; entry: AuditEntry };
}
