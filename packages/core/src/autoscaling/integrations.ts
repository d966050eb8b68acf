// Telling the world a group's new worker count. `local`: nothing to do here, MODE=pool processes
// read autoscaling_state (woken by the NOTIFY run.ts sends). `script`: a command, or a script of
// the admins workspace, given the group, the count, the reason and the event type, as Windmill's
// custom script integration. `kubernetes`: the Deployment's scale subresource (kubernetes.ts).
import { spawn } from "node:child_process";
import { AppError } from "../errors.ts";
import { runScriptByPath, type JobsContext } from "../jobs/run.ts";
import { runAs } from "../schedules/tick.ts";
import { ADMINS_WORKSPACE } from "../workspaces.ts";
import type { AutoscalingIntegration } from "./config.ts";
import type { ScalingDecision } from "./decide.ts";
import { scaleDeployment } from "./kubernetes.ts";

const DEFAULT_SCRIPT_TIMEOUT_SECS = 60;
/** The end of a failing command's output kept in its error (and the event row). */
const OUTPUT_TAIL_CHARS = 2000;

export async function applyScaling(
  ctx: JobsContext,
  group: string,
  integration: AutoscalingIntegration,
  decision: ScalingDecision,
): Promise<void> {
  if (integration.type === "local") return;
  if (integration.type === "kubernetes") {
    await scaleDeployment(integration, group, decision.to);
    return;
  }
  const args = [group, String(decision.to), decision.reason, decision.eventType];
  if (integration.command) {
    await runCommand(integration.command, args, (integration.timeout_seconds ?? DEFAULT_SCRIPT_TIMEOUT_SECS) * 1000);
  } else if (integration.path) {
    await runAdminsScript(ctx, integration.path, {
      worker_group: group,
      desired_workers: decision.to,
      reason: decision.reason,
      event_type: decision.eventType,
    });
  }
}

/**
 * Runs the operator's command with the four arguments appended (argv: no shell, so a reason
 * cannot inject anything), and a bare environment: the server's DATABASE_URL and
 * MILLRACE_SECRET_KEY are none of its business.
 */
export function runCommand(command: string[], args: string[], timeoutMs: number): Promise<void> {
  const [program, ...first] = command;
  return new Promise((resolve, reject) => {
    const child = spawn(program!, [...first, ...args], {
      env: {
        PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
        HOME: process.env.HOME ?? "/tmp",
        MILLRACE_WORKER_GROUP: args[0],
        MILLRACE_DESIRED_WORKERS: args[1],
      },
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
      else if (signal === "SIGKILL") reject(new Error(`${program} did not finish within ${timeoutMs / 1000} s`));
      else reject(new Error(`${program} exited with ${code ?? signal}: ${output.trim()}`));
    });
  });
}

/** As Windmill does: a script of the admins workspace, run as whoever deployed its current version. */
async function runAdminsScript(ctx: JobsContext, path: string, args: object): Promise<void> {
  const script = await ctx.db.script.findFirst({
    where: { workspaceId: ADMINS_WORKSPACE, path, archived: false },
    orderBy: { createdAt: "desc" },
    select: { createdBy: true },
  });
  if (!script) throw new AppError("NOT_FOUND", `script ${path} not found in the ${ADMINS_WORKSPACE} workspace`);
  const membership = await runAs(ctx, ADMINS_WORKSPACE, `u/${script.createdBy}`);
  await runScriptByPath(ctx, membership, path, args);
}
