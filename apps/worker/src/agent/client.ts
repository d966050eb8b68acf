import type { ClaimedJob, JobOutcome, SlotPing, WorkerScriptKind, WorkerScriptOutcome } from "@millrace/core";

/** The parts of the group's config an agent acts on itself (its scripts), from each ping's answer. */
export interface AgentWorkerConfig {
  init_bash?: string;
  periodic_script_bash?: string;
  periodic_script_interval_seconds?: number;
}

/** A claimed job as the server answers it (see agentClaim in core). */
export interface AgentJob extends ClaimedJob {
  maskedValues: string[];
  sharedFlowRoot: string | null;
  prepareError?: string;
}

export class AgentHttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/**
 * The agent's only channel to Millrace: the /api/agent_workers routes, with its AGENT_TOKEN.
 * The token never goes into a log line or an error message.
 */
export class AgentClient {
  private readonly baseUrl: string;
  private readonly token: string;

  constructor(baseUrl: string, token: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.token = token;
  }

  private async post<T>(route: string, body: unknown): Promise<T> {
    const response = await fetch(`${this.baseUrl}/api/agent_workers/${route}`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    if (!response.ok) {
      const detail = (await response.text().catch(() => "")).slice(0, 500);
      throw new AgentHttpError(response.status, `${route}: HTTP ${response.status} ${detail}`);
    }
    return (await response.json()) as T;
  }

  ping(body: {
    held?: string[];
    fenced?: { jobId: string; bossJobId: string }[];
    host: string;
    version: string;
    sandbox: string;
    memoryBytes: number;
    slots: SlotPing[];
  }): Promise<{
    worker_group: string;
    tags: string[];
    name_prefix: string;
    canceled: { id: string; reason: string }[];
    /** The zombie monitor's timeout (s); absent from servers older than self-fencing. */
    zombie_job_timeout?: number;
    worker_config: AgentWorkerConfig | null;
  }> {
    return this.post("ping", {
      ...(body.held ? { held: body.held } : {}),
      ...(body.fenced?.length
        ? { fenced: body.fenced.map((job) => ({ job_id: job.jobId, boss_job_id: job.bossJobId })) }
        : {}),
      host: body.host,
      version: body.version,
      sandbox: body.sandbox,
      memory_bytes: body.memoryBytes,
      slots: body.slots.map((slot) => ({
        name: slot.name,
        current_job_id: slot.currentJobId,
        jobs_executed: slot.jobsExecuted,
        occupancy_15s: slot.occupancy15s,
        occupancy_5m: slot.occupancy5m,
        occupancy_30m: slot.occupancy30m,
      })),
    });
  }

  async claim(workerNames: string[]): Promise<AgentJob[]> {
    const { jobs } = await this.post<{ jobs: (AgentJob & { scheduledFor: string | null })[] }>("claim", {
      worker_names: workerNames,
    });
    // Dates arrive as text.
    return jobs.map((job) => ({
      ...job,
      scheduledFor: job.scheduledFor ? new Date(job.scheduledFor) : null,
    }));
  }

  async appendLog(jobId: string, chunk: string): Promise<void> {
    await this.post("logs", { entries: [{ job_id: jobId, chunk }] });
  }

  async complete(
    completions: {
      jobId: string;
      bossJobId: string;
      callbackToken: string | null;
      outcome: JobOutcome;
      pendingLog: string;
      startedAt?: Date;
    }[],
  ): Promise<string[]> {
    const { recorded } = await this.post<{ recorded: string[] }>("complete", {
      completions: completions.map((c) => ({
        job_id: c.jobId,
        boss_job_id: c.bossJobId,
        callback_token: c.callbackToken,
        outcome: c.outcome,
        pending_log: c.pendingLog,
        ...(c.startedAt ? { started_at: c.startedAt.toISOString() } : {}),
      })),
    });
    return recorded;
  }

  /** Records the start of the group's init or periodic script (the server checks it is the group's). */
  async workerScriptStart(workerName: string, kind: WorkerScriptKind, content: string): Promise<string> {
    const { id } = await this.post<{ id: string }>("worker_script/start", {
      worker_name: workerName,
      kind,
      content,
    });
    return id;
  }

  async workerScriptEnd(jobId: string, outcome: WorkerScriptOutcome, pendingLog: string): Promise<void> {
    await this.post("worker_script/end", { job_id: jobId, outcome, pending_log: pendingLog });
  }

  async leave(workerNames: string[], unfinished: { jobId: string; bossJobId: string }[]): Promise<void> {
    await this.post("leave", {
      worker_names: workerNames,
      unfinished: unfinished.map((job) => ({ job_id: job.jobId, boss_job_id: job.bossJobId })),
    });
  }
}
