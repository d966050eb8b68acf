// `millrace script run <path> -d '<json>'`: enqueue a run, follow its log live, print its result.
import type { Command } from "commander";
import type { ApiClient } from "../client.ts";
import { commandContext } from "../context.ts";
import { CliError, EXIT } from "../exit-codes.ts";

const POLL_MS = 500;

interface JobUpdate {
  running: boolean;
  completed: boolean;
  new_logs?: string;
  log_offset?: number;
}

interface CompletedJob {
  id: string;
  type: "CompletedJob" | "QueuedJob";
  success?: boolean;
  canceled?: boolean;
  result?: unknown;
  duration_ms?: number;
}

export function encodePath(scriptPath: string): string {
  return scriptPath
    .split("/")
    .filter((part) => part !== "")
    .map(encodeURIComponent)
    .join("/");
}

export function parseArgs(data: string): Record<string, unknown> {
  let args: unknown;
  try {
    args = JSON.parse(data);
  } catch (error) {
    throw new CliError(
      `-d is not valid JSON: ${(error as Error).message}`,
      EXIT.USAGE,
      `quote it for the shell: -d '{"name": "world"}'`,
    );
  }
  if (typeof args !== "object" || args === null || Array.isArray(args))
    throw new CliError("-d must be a JSON object of arguments", EXIT.USAGE, `e.g. -d '{"name": "world"}'`);
  return args as Record<string, unknown>;
}

/** Polls the job's updates until it completes, writing its new log lines as they come. */
export async function followJob(
  client: ApiClient,
  id: string,
  writeLog: (chunk: string) => void,
): Promise<CompletedJob> {
  let offset = 0;
  for (;;) {
    const update = await client.json<JobUpdate>(
      "GET",
      client.ws(`/jobs_u/getupdate/${encodeURIComponent(id)}?log_offset=${offset}`),
    );
    if (update.new_logs) writeLog(update.new_logs);
    if (typeof update.log_offset === "number") offset = update.log_offset;
    if (update.completed) {
      // The last lines may have been written with the completion: read once more after it.
      const rest = await client.json<JobUpdate>(
        "GET",
        client.ws(`/jobs_u/getupdate/${encodeURIComponent(id)}?log_offset=${offset}`),
      );
      if (rest.new_logs) writeLog(rest.new_logs);
      return client.json<CompletedJob>("GET", client.ws(`/jobs_u/get/${encodeURIComponent(id)}`));
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

export function registerScriptCommands(program: Command): void {
  const script = program.command("script").description("run deployed scripts");
  script
    .command("run")
    .description("run a deployed script, follow its log until it ends and print its result (JSON)")
    .argument("<path>", "the script's path, e.g. u/admin/hello or f/ops/deploy")
    .option("-d, --data <json>", "the arguments, as a JSON object", "{}")
    .option("--no-logs", "do not print the job's log (on stderr)")
    .action(async (scriptPath: string, options: { data: string; logs: boolean }, command: Command) => {
      const { client, out } = commandContext(command);
      const args = parseArgs(options.data);
      const response = await client.request("POST", client.ws(`/jobs/run/p/${encodePath(scriptPath)}`), args);
      const id = (await response.text()).trim().replace(/^"|"$/g, "");
      out.info(`job ${id} queued`);
      const job = await followJob(client, id, (chunk) => {
        if (options.logs) process.stderr.write(chunk);
      });
      if (out.json) out.result({ id, success: job.success === true, result: job.result ?? null });
      else out.result(job.result ?? null, (value) => JSON.stringify(value, null, 2));
      if (!job.success)
        throw new CliError(
          `job ${id} ${job.canceled ? "was canceled" : "failed"}`,
          EXIT.FAILED,
          `see its log with \`millrace job list --script ${scriptPath}\` or in the UI under Runs`,
        );
    });
}
