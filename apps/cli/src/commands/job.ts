// `millrace job list`: the workspace's jobs, newest first (GET /api/w/{ws}/jobs/list).
import type { Command } from "commander";
import { commandContext } from "../context.ts";
import { CliError, EXIT } from "../exit-codes.ts";

interface ListedJob {
  id: string;
  type: "CompletedJob" | "QueuedJob";
  script_path?: string;
  job_kind: string;
  created_by: string;
  created_at: string;
  running?: boolean;
  success?: boolean;
  canceled?: boolean;
  duration_ms?: number;
}

function state(job: ListedJob): string {
  if (job.type === "QueuedJob") return job.running ? "running" : "queued";
  if (job.canceled) return "canceled";
  return job.success ? "success" : "failure";
}

export function registerJobCommands(program: Command): void {
  const job = program.command("job").description("jobs of the workspace");
  job
    .command("list")
    .description("list jobs, newest first")
    .option("-n, --limit <n>", "at most this many jobs", "20")
    .option("--script <path>", "only the runs of this script")
    .option("--success <true|false>", "only successful (true) or failed (false) jobs")
    .action(async (options: { limit: string; script?: string; success?: string }, command: Command) => {
      const { client, out } = commandContext(command);
      if (!/^[1-9]\d*$/.test(options.limit))
        throw new CliError(`--limit must be a whole number, 1 or more, got ${options.limit}`, EXIT.USAGE);
      if (options.success !== undefined && options.success !== "true" && options.success !== "false")
        throw new CliError(`--success must be true or false, got ${options.success}`, EXIT.USAGE);
      const query = new URLSearchParams({ per_page: options.limit });
      if (options.script) query.set("script_path_exact", options.script);
      if (options.success) query.set("success", options.success);
      const jobs = await client.json<ListedJob[]>("GET", client.ws(`/jobs/list?${query}`));
      out.result(jobs, () =>
        jobs.length === 0
          ? "no jobs"
          : jobs
              .map((j) =>
                [
                  j.id,
                  state(j).padEnd(8),
                  j.created_at,
                  j.duration_ms !== undefined ? `${j.duration_ms} ms` : "-",
                  j.script_path ?? j.job_kind,
                  j.created_by,
                ].join("\t"),
              )
              .join("\n"),
      );
    });
}
