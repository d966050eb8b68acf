// Telling the world a group's new worker count. `local`: nothing to do here, MODE=pool processes
// read autoscaling_state (woken by the NOTIFY run.ts sends). `script`: a command, or a script of
// the admins workspace, given the group, the count, the reason and the event type, as Windmill's
// custom script integration. `kubernetes`: the Deployment's scale subresource (kubernetes.ts).
import { spawn } from "node:child_process";
import os from "node:os";
import { AppError } from "../errors.ts";
import { runScriptByPath, type JobsContext } from "../jobs/run.ts";
import { runAs } from "../schedules/tick.ts";
import { ADMINS_WORKSPACE } from "../workspaces.ts";
import type { AutoscalingIntegration } from "./config.ts";
import type { ScalingDecision } from "./decide.ts";
import { kubernetesCredentials, scaleDeployment, type InClusterService } from "./kubernetes.ts";

const DEFAULT_SCRIPT_TIMEOUT_SECS = 60;
/** The command's PATH: the server's own is none of its business (give an absolute path otherwise). */
const COMMAND_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** What the integrations need from the server's environment (apps/web/server/env.ts). */
export interface IntegrationEnvironment {
  kubernetesService?: InClusterService;
}
/** The end of a failing command's output kept in its error (and the event row). */
const OUTPUT_TAIL_CHARS = 2000;

export async function applyScaling(
  ctx: JobsContext,
  group: string,
  integration: AutoscalingIntegration,
  decision: ScalingDecision,
  environment: IntegrationEnvironment,
): Promise<void> {
  if (integration.type === "local") return;
  if (integration.type === "kubernetes") {
    const credentials = kubernetesCredentials(integration, environment.kubernetesService);
    await scaleDeployment(integration, group, decision.to, credentials);
    return;
  }
  const args = [group, String(decision.to), decision.reason, decision.eventType];
  if (integration.command) {
    await runCommand(
      integration.command,
      args,
      (integration.timeout_seconds ?? DEFAULT_SCRIPT_TIMEOUT_SECS) * 1000,
    );
  } else if (integration.path) {
    await runAdminsScript(
      ctx,
      integration.path,
      {
        worker_group: group,
        desired_workers: decision.to,
        reason: decision.reason,
        event_type: decision.eventType,
      },
      integration.tag,
    );
  }
}

/**
 * Runs the operator's command with the four arguments appended (argv: no shell, so a reason
 * cannot inject anything), and a bare environment: the server's DATABASE_URL and
 * MILLRACE_SECRET_KEY are none of its business.
 */
export function runCommand(command: string[], args: string[], timeoutMs: number): Promise<void> {
  const [program, ...first] = command;
  const env: Record<string, string> = {
    PATH: COMMAND_PATH,
    HOME: os.homedir(),
    MILLRACE_WORKER_GROUP: args[0] ?? "",
    MILLRACE_DESIRED_WORKERS: args[1] ?? "",
  };
  return new Promise((resolve, reject) => {
    const child = spawn(program!, [...first, ...args], {
      // Next's types make NODE_ENV required in a ProcessEnv; a child needs none.
      env: env as unknown as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: timeoutMs,
      killSignal: "SIGKILL",
    });
    let output = "";
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-OUTPUT_TAIL_CHARS));
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (error) => reject(new Error(`${program}: ${error.message}`)));
    child.on("close", (code, signal) => {
      if (code === 0) resolve();
      else if (signal === "SIGKILL")
        reject(new Error(`${program} did not finish within ${timeoutMs / 1000} s`));
      else reject(new Error(`${program} exited with ${code ?? signal}: ${output.trim()}`));
    });
  });
}

/** As Windmill does: a script of the admins workspace, run as whoever deployed its current version. */
async function runAdminsScript(
  ctx: JobsContext,
  path: string,
  args: object,
  tag: string | undefined,
): Promise<void> {
  const script = await ctx.db.script.findFirst({
    where: { workspaceId: ADMINS_WORKSPACE, path, archived: false },
    orderBy: { createdAt: "desc" },
    select: { createdBy: true },
  });
  if (!script)
    throw new AppError("NOT_FOUND", `script ${path} not found in the ${ADMINS_WORKSPACE} workspace`);
  const membership = await runAs(ctx, ADMINS_WORKSPACE, `u/${script.createdBy}`);
  await runScriptByPath(ctx, membership, path, args, { tag: tag ?? null });
}
