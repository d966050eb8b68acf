// `millrace sync pull|push` (the workspace as files, in the layout `wmill` uses, plus `.millrace/`)
// and `millrace restore` (superadmins: a whole workspace back from a git remote or a folder).
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline/promises";
import { isSyncManagedFile } from "@millrace/sync";
import type { Command } from "commander";
import type { ApiClient } from "../client.ts";
import { commandContext } from "../context.ts";
import { CliError, EXIT } from "../exit-codes.ts";
import type { Output } from "../output.ts";

interface Diff {
  added: string[];
  changed: string[];
  deleted: string[];
}

interface Report {
  workspaceId: string;
  applied: boolean;
  errors: { file: string; field?: string; message: string }[];
  skipped: { file: string; reason: string }[];
  diff: Diff;
  needsConfirmation: boolean;
  counts: Record<string, number>;
  undecryptableSecrets: string[];
  usersNeedingPasswordReset: string[];
  durationMs: number;
}

/** The files Millrace manages under `dir` (a README or CI files beside them are left alone). */
function readLocalFiles(dir: string, out: Output): Map<string, string> {
  const files = new Map<string, string>();
  if (!fs.existsSync(dir)) return files;
  const all: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      if (entry.name === ".git" || entry.name === "node_modules") continue;
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(child);
      else if (isSyncManagedFile(child)) all.push(child);
    }
  };
  walk("");
  const bar = out.progress("reading", all.length);
  all.sort().forEach((file, index) => {
    files.set(file, fs.readFileSync(path.join(dir, file), "utf8"));
    bar.update(index + 1);
  });
  bar.stop();
  return files;
}

function diffOf(before: Map<string, string>, after: Map<string, string>): Diff {
  const diff: Diff = { added: [], changed: [], deleted: [] };
  for (const [file, text] of after) {
    if (!before.has(file)) diff.added.push(file);
    else if (before.get(file) !== text) diff.changed.push(file);
  }
  for (const file of before.keys()) if (!after.has(file)) diff.deleted.push(file);
  return diff;
}

const changeCount = (diff: Diff) => diff.added.length + diff.changed.length + diff.deleted.length;

function printDiff(out: Output, diff: Diff): void {
  for (const file of diff.added) out.info(`  + ${file}`);
  for (const file of diff.changed) out.info(`  ~ ${file}`);
  for (const file of diff.deleted) out.info(`  - ${file}`);
  out.info(`${diff.added.length} added, ${diff.changed.length} changed, ${diff.deleted.length} deleted`);
}

/** Asks on a terminal; without one, a confirmation is an error that says to pass --yes. */
async function confirm(question: string, yes: boolean | undefined, out: Output): Promise<void> {
  if (yes) return;
  if (!process.stdin.isTTY || out.json)
    throw new CliError(
      "confirmation needed",
      EXIT.NEEDS_CONFIRMATION,
      "run again with --yes to apply the changes",
    );
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  const answer = (await rl.question(`${question} [y/N] `)).trim().toLowerCase();
  rl.close();
  if (answer !== "y" && answer !== "yes") throw new CliError("cancelled", EXIT.NEEDS_CONFIRMATION);
}

/** Maps an answer that is not a report to a CliError. */
function errorFor(status: number, message: string): CliError {
  if (status === 401 || status === 403)
    return new CliError(
      `${status} ${message}`,
      EXIT.UNAUTHORIZED,
      "use a token of a workspace admin (superadmin for restore)",
    );
  if (status === 404) return new CliError(message, EXIT.NOT_FOUND);
  if (status === 400) return new CliError(message, EXIT.INVALID);
  return new CliError(`${status} ${message}`, EXIT.FAILED);
}

const isReport = (value: unknown): value is Report =>
  typeof value === "object" && value !== null && Array.isArray((value as Report).errors);

/**
 * POSTs and returns the report whatever the status (400 and 409 carry one too). The server
 * streams its progress (NDJSON), shown as one bar per phase.
 */
async function postForReport(
  client: ApiClient,
  out: Output,
  apiPath: string,
  body: unknown,
): Promise<Report> {
  let response: Response;
  try {
    response = await fetch(`${client.target.url}${apiPath}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/x-ndjson, application/json",
        ...(client.target.token ? { Authorization: `Bearer ${client.target.token}` } : {}),
      },
      body: JSON.stringify(body),
    });
  } catch {
    throw new CliError(
      `cannot reach ${client.target.url}`,
      EXIT.UNREACHABLE,
      "check --url and that the server runs",
    );
  }
  if ((response.headers.get("content-type") ?? "").includes("application/x-ndjson") && response.body) {
    let bar: { phase: string; progress: ReturnType<Output["progress"]> } | null = null;
    let last: { status: number; report?: unknown; error?: string } | null = null;
    let buffered = "";
    const decoder = new TextDecoder();
    const handle = (line: string) => {
      if (!line.trim()) return;
      const message = JSON.parse(line) as {
        progress?: { phase: string; done: number; total: number };
        status?: number;
        report?: unknown;
        error?: string;
      };
      if (message.progress) {
        const { phase, done, total } = message.progress;
        if (bar?.phase !== phase) {
          bar?.progress.stop();
          bar = { phase, progress: out.progress(phase.padEnd(22), Math.max(total, 1)) };
        }
        bar.progress.update(done, Math.max(total, 1));
      } else if (message.status !== undefined) last = { status: message.status, ...message };
    };
    for await (const chunk of response.body) {
      buffered += decoder.decode(chunk, { stream: true });
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      lines.forEach(handle);
    }
    handle(buffered);
    (bar as { progress: { stop(): void } } | null)?.progress.stop();
    const final = last as { status: number; report?: unknown; error?: string } | null;
    if (!final) throw new CliError("the server closed the answer early", EXIT.FAILED, "see the server's log");
    if (isReport(final.report)) return final.report;
    throw errorFor(final.status, final.error ?? "unknown error");
  }
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // a plain-text error: handled below
  }
  if (isReport(parsed)) return parsed;
  throw errorFor(response.status, text);
}

function printReport(out: Output, report: Report): void {
  if (out.json) return out.result(report);
  for (const skipped of report.skipped) out.info(`  skipped ${skipped.file}: ${skipped.reason}`);
  if (report.errors.length > 0) {
    console.error(`${report.errors.length} problem(s), nothing was applied:`);
    for (const e of report.errors)
      console.error(`  ${e.file}${e.field ? ` (${e.field})` : ""}: ${e.message}`);
    return;
  }
  if (!report.applied) return;
  const counts = Object.entries(report.counts)
    .map(([kind, n]) => `${n} ${kind}`)
    .join(", ");
  out.result(`workspace ${report.workspaceId}: ${counts} (${(report.durationMs / 1000).toFixed(1)} s)`);
  if (report.undecryptableSecrets.length > 0)
    console.error(
      `${report.undecryptableSecrets.length} secret(s) could not be decrypted (another MILLRACE_SECRET_KEY); ` +
        `they are empty, set them again: ${report.undecryptableSecrets.join(", ")}`,
    );
  if (report.usersNeedingPasswordReset.length > 0)
    console.error(
      `${report.usersNeedingPasswordReset.length} user(s) came back without a password; a superadmin must ` +
        `set one (Users page): ${report.usersNeedingPasswordReset.join(", ")}`,
    );
}

function exitFor(report: Report): void {
  if (report.errors.length > 0)
    throw new CliError(
      "the repository was refused",
      EXIT.INVALID,
      "fix the files listed above and run again",
    );
}

/** Sends files for a push or restore: a check first, the diff shown, then the apply once confirmed. */
async function sendWithConfirmation(
  client: ApiClient,
  out: Output,
  apiPath: string,
  body: Record<string, unknown>,
  yes: boolean | undefined,
): Promise<void> {
  let report = await postForReport(client, out, apiPath, { ...body, yes: false });
  if (report.needsConfirmation) {
    printDiff(out, report.diff);
    await confirm(`apply these changes to workspace ${report.workspaceId}?`, yes, out);
    report = await postForReport(client, out, apiPath, { ...body, yes: true });
  }
  printReport(out, report);
  exitFor(report);
}

export function registerSyncCommands(program: Command): void {
  const sync = program.command("sync").description("pull or push a workspace as files (wmill's layout)");
  sync
    .command("pull")
    .description("write the workspace into a folder (shows the diff, asks unless --yes)")
    .argument("[dir]", "target folder", ".")
    .option("-y, --yes", "write without asking")
    .action(async (dir: string, options: { yes?: boolean }, command: Command) => {
      const { client, out } = commandContext(command);
      const started = performance.now();
      const { files } = await client.json<{ files: Record<string, string> }>("GET", client.ws("/sync/files"));
      const remote = new Map(Object.entries(files));
      const local = readLocalFiles(dir, out);
      const diff = diffOf(local, remote);
      if (changeCount(diff) === 0)
        return out.result(out.json ? { diff, written: 0 } : "0 changes: the folder is up to date");
      printDiff(out, diff);
      if (local.size > 0) await confirm(`write these changes into ${dir}?`, options.yes, out);
      const bar = out.progress("writing", changeCount(diff));
      let done = 0;
      for (const file of [...diff.added, ...diff.changed]) {
        const full = path.join(dir, file);
        fs.mkdirSync(path.dirname(full), { recursive: true });
        fs.writeFileSync(full, remote.get(file) ?? "");
        bar.update(++done);
      }
      for (const file of diff.deleted) {
        fs.rmSync(path.join(dir, file), { force: true });
        bar.update(++done);
      }
      bar.stop();
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      out.result(out.json ? { diff, written: done } : `pulled ${done} change(s) into ${dir} in ${seconds} s`);
    });
  sync
    .command("push")
    .description(
      "make the workspace equal to a folder (checked whole first; shows the diff, asks unless --yes)",
    )
    .argument("[dir]", "source folder", ".")
    .option("-y, --yes", "apply without asking")
    .option("--plain-secrets", "secret values in the files are plain text (a Windmill export): encrypt them")
    .action(async (dir: string, options: { yes?: boolean; plainSecrets?: boolean }, command: Command) => {
      const { client, out } = commandContext(command);
      if (!fs.existsSync(dir)) throw new CliError(`no folder ${dir}`, EXIT.NOT_FOUND);
      const files = readLocalFiles(dir, out);
      // `.millrace/` describes the instance side (members, keys): a push leaves it to restore.
      const pushed = Object.fromEntries([...files].filter(([file]) => !file.startsWith(".millrace/")));
      await sendWithConfirmation(
        client,
        out,
        client.ws("/sync/push"),
        { files: pushed, plain_secrets: options.plainSecrets === true },
        options.yes,
      );
    });

  program
    .command("restore")
    .description("recreate a workspace from a git remote or a folder (superadmins)")
    .option("--from-git <url>", "HTTP(S) URL of the repository")
    .option("--from-dir <dir>", "a folder holding the repository instead")
    .option("--branch <branch>", "branch to restore", "main")
    .option("--git-username <name>", "git username (default: $MILLRACE_GIT_USERNAME)")
    .option("--git-password <secret>", "git password or token (default: $MILLRACE_GIT_PASSWORD)")
    .option(
      "--workspace-id <id>",
      "restore into this workspace (default: the id in .millrace/workspace.yaml)",
    )
    .option("-y, --yes", "apply to a workspace that differs without asking")
    .option("--plain-secrets", "secret values in the repository are plain text: encrypt them")
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      const { client, out } = commandContext(command);
      // eslint-disable-next-line no-restricted-properties
      const env = process.env;
      const fromGit = options.fromGit as string | undefined;
      const fromDir = options.fromDir as string | undefined;
      if (!fromGit === !fromDir)
        throw new CliError(
          "give --from-git <url> or --from-dir <dir>",
          EXIT.USAGE,
          "e.g. millrace restore --from-git https://git.example.com/ops.git",
        );
      const body: Record<string, unknown> = {
        workspace_id: options.workspaceId,
        plain_secrets: options.plainSecrets === true,
      };
      if (fromGit) {
        const username = (options.gitUsername as string | undefined) ?? env.MILLRACE_GIT_USERNAME;
        const password = (options.gitPassword as string | undefined) ?? env.MILLRACE_GIT_PASSWORD;
        body.git = { url: fromGit, branch: options.branch, username, password };
      } else {
        if (!fs.existsSync(fromDir!)) throw new CliError(`no folder ${fromDir}`, EXIT.NOT_FOUND);
        body.files = Object.fromEntries(readLocalFiles(fromDir!, out));
      }
      out.info(`restoring from ${fromGit ?? fromDir}…`);
      await sendWithConfirmation(client, out, "/api/restore", body, options.yes as boolean | undefined);
    });
}
