import type { ClaimedJob } from "@millrace/core";
import type { JobStore } from "../job-store.ts";
import type { AgentClient, AgentJob } from "./client.ts";

/**
 * The JobStore of an agent: logs go to the server; what a database worker would read (resolved
 * arguments, locks, the flow run) came with the claim (see agentClaim in core).
 */
export function agentJobStore(client: AgentClient, claimed: Map<string, AgentJob>): JobStore {
  const of = (job: Pick<ClaimedJob, "id">): AgentJob | undefined => claimed.get(job.id);
  return {
    appendLog: (jobId, text) => client.appendLog(jobId, text),
    resolveArgs(job, onSecretRevealed) {
      const agentJob = of(job);
      if (agentJob?.prepareError) return Promise.reject(new Error(agentJob.prepareError));
      for (const value of agentJob?.maskedValues ?? []) onSecretRevealed(value);
      return Promise.resolve(job.args);
    },
    // The server filled the lock in at the claim when there was one: none means not yet computed.
    lockOfVersion: () =>
      Promise.reject(
        new Error(
          "dependencies are still being installed: this version's dependency job has not finished (see its `dependency` job)",
        ),
      ),
    sharedFlowRoot: (job) => Promise.resolve(of(job)?.sharedFlowRoot ?? null),
  };
}
