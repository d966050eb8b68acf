import { createHash } from "node:crypto";
import path from "node:path";
import { dedicatedTag, parseDedicatedTarget, type ClaimedJob, type WorkerGroupConfig } from "@millrace/core";
import {
  hasRequirements,
  isWarmLanguage,
  WarmProcess,
  type ExecuteOutcome,
  type Language,
  type WarmLanguage,
} from "@millrace/runtime";
import { prepareCallback } from "./job-callback.ts";
import { prepareDependencies, type DependencyJob } from "./job-dependencies.ts";
import type { Pool } from "@millrace/db";
import type { DedicatedJobs, RunJobDeps } from "./run-job-deps.ts";

export interface DedicatedTarget {
  workspaceId: string;
  path: string;
  /** The tag its jobs are enqueued on (see dedicatedTag). */
  tag: string;
}

/** DEDICATED_WORKER wins over the group's `dedicated_worker`, as WORKER_TAGS wins over its tags. */
export function dedicatedTarget(
  envValue: string | undefined,
  config: WorkerGroupConfig | null,
): DedicatedTarget | null {
  const value = envValue || config?.dedicated_worker;
  const target = value ? parseDedicatedTarget(value) : null;
  return target ? { ...target, tag: dedicatedTag(target.workspaceId, target.path) } : null;
}

interface Version {
  key: string;
  idle: WarmProcess[];
  busy: number;
  lastUsed: number;
}

/** A version is its code and its lock: either changing needs a fresh process. */
function versionKey(job: Pick<ClaimedJob, "language" | "content" | "lock">): string {
  return createHash("sha256")
    .update(`${job.language}\0${job.lock ?? ""}\0${job.content}`)
    .digest("hex")
    .slice(0, 16);
}

// How often the latest deployed version is looked up, to have its process warm before its jobs.
const REFRESH_MS = 5000;
// Processes of an older version stay this long after its last job (jobs enqueued before a deploy
// still run the old code), then the latest version's process replaces them.
const KEEP_OLD_VERSION_MS = 10_000;

/**
 * A dedicated worker's runner: jobs of its script run in warm processes that imported the script
 * once (bun, python3), one job at a time per process, one process per busy slot. A new deployed
 * version gets a process of its own as soon as it is seen (polled, and on its first job); older
 * versions' processes are stopped once idle. A process that dies, times out or is canceled is
 * replaced on the next job.
 */
export class DedicatedRunner implements DedicatedJobs {
  readonly target: DedicatedTarget;
  private readonly deps: RunJobDeps & { pool: Pool };
  private readonly log: (message: string) => void;
  private readonly versions = new Map<string, Version>();
  private latestKey: string | null = null;
  private counter = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private warnedLanguage = false;

  constructor(deps: RunJobDeps & { pool: Pool }, target: DedicatedTarget, log: (message: string) => void) {
    this.deps = deps;
    this.target = target;
    this.log = log;
  }

  serves(job: ClaimedJob): boolean {
    return job.tag === this.target.tag && job.kind === "script" && isWarmLanguage(job.language);
  }

  /** Warms the latest version now and keeps following new deploys. */
  async start(): Promise<void> {
    await this.refresh().catch((error: Error) => this.log(`dedicated: could not warm up: ${error.message}`));
    this.timer = setInterval(() => void this.refresh().catch(() => {}), REFRESH_MS);
    this.timer.unref();
  }

  async run(job: ClaimedJob, signal: AbortSignal, onLog: (chunk: string) => void): Promise<ExecuteOutcome> {
    const callback = await prepareCallback(this.deps, job);
    const key = versionKey(job);
    let proc: WarmProcess;
    try {
      proc = await this.acquire(key, job, onLog, signal);
    } catch (error) {
      return { status: "failure", error: { name: "ExecutionErr", message: (error as Error).message } };
    }
    try {
      if (proc.loadError) return proc.loadError;
      const { execMs: _, ...outcome } = await proc.run({
        args: callback.args,
        argOrder: job.argOrder,
        env: callback.env,
        timeoutMs: job.timeoutSecs * 1000,
        signal,
        onLog,
      });
      return outcome as ExecuteOutcome;
    } finally {
      this.release(key, proc);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    const all = [...this.versions.values()].flatMap((version) => version.idle.splice(0));
    this.versions.clear();
    await Promise.all(all.map((proc) => proc.close()));
  }

  private async refresh(): Promise<void> {
    if (this.closed) return;
    await this.warmLatest();
    this.trim();
  }

  private async warmLatest(): Promise<void> {
    const { rows } = await this.deps.pool.query<{
      hash: string;
      language: string;
      content: string;
      lock: string | null;
      timeout_secs: number | null;
    }>(
      `SELECT hash, language, content, lock, timeout_secs FROM script
        WHERE workspace_id = $1 AND path = $2 AND NOT archived ORDER BY created_at DESC LIMIT 1`,
      [this.target.workspaceId, this.target.path],
    );
    const row = rows[0];
    if (!row) return;
    if (!isWarmLanguage(row.language)) {
      if (!this.warnedLanguage) this.log(`dedicated: ${row.language} scripts run one process per job`);
      this.warnedLanguage = true;
      return;
    }
    // Not warmed before its lock exists; its jobs wait for the lock anyway.
    if (row.lock === null && hasRequirements(row.language, row.content)) return;
    const version: DependencyJob = {
      kind: "script",
      language: row.language as Language,
      content: row.content,
      lock: row.lock,
      scriptHash: row.hash,
      workspaceId: this.target.workspaceId,
      timeoutSecs: row.timeout_secs ?? 900,
    };
    const key = versionKey(version);
    if (key === this.latestKey) return;
    this.latestKey = key;
    const entry = this.entry(key);
    if (entry.idle.length === 0 && entry.busy === 0) {
      const proc = await this.startProcess(key, version, () => {});
      if (this.closed) void proc.close();
      else entry.idle.push(proc);
      this.log(`dedicated: ${this.target.path} (${row.hash}) is warm (pid ${proc.pid})`);
    }
  }

  private entry(key: string): Version {
    let version = this.versions.get(key);
    if (!version) this.versions.set(key, (version = { key, idle: [], busy: 0, lastUsed: Date.now() }));
    return version;
  }

  private async acquire(
    key: string,
    job: DependencyJob,
    onLog: (chunk: string) => void,
    signal: AbortSignal,
  ): Promise<WarmProcess> {
    const version = this.entry(key);
    version.busy++;
    version.lastUsed = Date.now();
    let proc: WarmProcess | undefined;
    while ((proc = version.idle.pop())) {
      if (!proc.dead) return proc;
      void proc.close();
    }
    try {
      return await this.startProcess(key, job, onLog, signal);
    } catch (error) {
      version.busy--;
      throw error;
    }
  }

  private async startProcess(
    key: string,
    job: DependencyJob,
    onLog: (chunk: string) => void,
    signal?: AbortSignal,
  ): Promise<WarmProcess> {
    const dependencies = await prepareDependencies(this.deps, job, onLog, signal);
    // Dot-prefixed: never a job id, so never removed or reused by a job's folder.
    const dir = path.join(path.resolve(this.deps.jobDir), `.dedicated-${key}-${++this.counter}`);
    return WarmProcess.start({
      language: job.language as WarmLanguage,
      content: job.content,
      dir,
      env: dependencies.env,
      nodeModulesDir: dependencies.nodeModulesDir,
    });
  }

  /** Puts back a process acquired for a job. */
  private release(key: string, proc: WarmProcess): void {
    const version = this.entry(key);
    version.busy--;
    if (proc.dead || this.closed) void proc.close();
    else version.idle.push(proc);
    this.trim();
  }

  /** Stops idle processes of versions other than the latest once they have not run for a while. */
  private trim(): void {
    const now = Date.now();
    for (const version of this.versions.values()) {
      if (version.key === this.latestKey || this.latestKey === null) continue;
      if (version.busy > 0 || now - version.lastUsed < KEEP_OLD_VERSION_MS) continue;
      for (const proc of version.idle.splice(0)) void proc.close();
      if (version.busy === 0) this.versions.delete(version.key);
    }
  }
}
