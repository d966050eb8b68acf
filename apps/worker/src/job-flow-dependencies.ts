import { inlineSteps, type ClaimedJob, type FlowValue } from "@millrace/core";
import {
  InstallError,
  RequirementsError,
  resolveDependencies,
  scriptRequirements,
  type ExecuteOutcome,
} from "@millrace/runtime";
import { installOptions, type DependencySettings } from "./job-dependencies.ts";

/**
 * A `flowdependencies` job (Windmill's flow_dependencies_async): locks each inline step of the
 * flow value in its args as a `dependency` job locks a script (its requirements resolved into
 * this machine's cache; "" for a step that declares none) and answers `{ updated_flow_value }`,
 * the value with every rawscript step's `lock` set. A step whose requirements cannot be resolved
 * fails the job, naming the step.
 */
export async function runFlowDependencyJob(
  deps: { jobDir: string; dependencies?: DependencySettings },
  job: ClaimedJob,
  signal: AbortSignal,
  onLog: (chunk: string) => void,
): Promise<ExecuteOutcome> {
  const value = structuredClone(job.args.flow_value) as FlowValue | undefined;
  if (!value || !Array.isArray(value.modules)) {
    return { status: "failure", error: { name: "DependencyError", message: "the job has no flow_value" } };
  }
  // Steps with the same language and code share one resolution.
  const locks = new Map<string, string>();
  for (const step of inlineSteps(value)) {
    const key = `${step.value.language}\u0000${step.value.content}`;
    let lock = locks.get(key);
    if (lock === undefined) {
      try {
        const requirements = scriptRequirements(step.value.language, step.value.content);
        if (!requirements) lock = "";
        else {
          onLog(`[millrace] step ${step.id} (${step.value.language}): resolving its requirements\n`);
          ({ lock } = await resolveDependencies(
            requirements,
            installOptions(deps, job.timeoutSecs, onLog, signal),
          ));
        }
      } catch (error) {
        if (signal.aborted) return { status: "canceled" };
        if (error instanceof InstallError || error instanceof RequirementsError) {
          return {
            status: "failure",
            error: { name: "DependencyError", message: `step ${step.id}: ${error.message}` },
          };
        }
        throw error;
      }
      locks.set(key, lock);
    }
    step.value.lock = lock;
  }
  return { status: "success", result: { updated_flow_value: value } };
}
