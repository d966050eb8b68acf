// `millrace backup create|restore`: straight to PostgreSQL (DATABASE_URL, else the embedded
// database of `npm start`), never over HTTP. See backup/create.ts and backup/restore.ts.
import path from "node:path";
import type { Command } from "commander";
import { createBackup } from "../backup/create.ts";
import { connect, databaseName, resolveDatabase } from "../backup/database.ts";
import { exportWorkspaces, type WorkspaceExport } from "../backup/export.ts";
import { restoreBackup } from "../backup/restore.ts";
import { CliError, EXIT } from "../exit-codes.ts";
import { makeOutput, type Output, type Progress } from "../output.ts";
import type { GlobalOptions } from "../context.ts";

function humanBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A progress bar that appears only once the work has lasted a second. */
function lazyProgress(
  out: Output,
  label: string,
): { update(done: number, total: number): void; stop(): void } {
  const since = performance.now();
  let bar: Progress | null = null;
  let stopped = false;
  return {
    update(done, total) {
      if (stopped || (!bar && performance.now() - since < 1000)) return;
      bar ??= out.progress(label, Math.max(total, 1));
      bar.update(done, Math.max(total, 1));
    },
    stop() {
      stopped = true;
      bar?.stop();
      bar = null;
    },
  };
}

function defaultBackupFile(): string {
  const stamp = new Date()
    .toISOString()
    .replace(/[:.]/g, "-")
    .replace(/-\d{3}Z$/, "Z");
  return path.join("backups", `millrace-${stamp}.backup`);
}

export function registerBackupCommands(program: Command): void {
  const backup = program
    .command("backup")
    .description("back up and restore the Millrace database (DATABASE_URL, else the embedded one)");

  backup
    .command("create")
    .description("dump the database into a file (and a manifest with row counts beside it)")
    .option("-o, --out <file>", "where to write the backup (default: backups/millrace-<time>.backup)")
    .option("--no-export", "skip the export of each workspace's sync files beside the backup")
    .action(async (options: { out?: string; export: boolean }, command: Command) => {
      const out = makeOutput(command.optsWithGlobals<GlobalOptions>().json === true);
      const file = path.resolve(options.out ?? defaultBackupFile());
      const database = await resolveDatabase((line) => out.info(line));
      try {
        const client = await connect(database.url);
        const progress = lazyProgress(out, "backup");
        const started = performance.now();
        try {
          out.info(`backing up ${database.label} to ${file}`);
          const result = await createBackup(client, databaseName(database.url), file, (done, total) =>
            progress.update(done, total),
          );
          progress.stop();
          let exported: WorkspaceExport | null = null;
          if (options.export) {
            exported = await exportWorkspaces(database.url, file);
            for (const failure of exported.failed)
              out.info(`warning: could not export workspace ${failure.id}: ${failure.error}`);
          }
          const { manifest: _manifest, ...summary } = result;
          const durationMs = Math.round(performance.now() - started);
          out.result(
            { ...summary, dumpMs: result.durationMs, durationMs, export: exported, source: database.label },
            () =>
              `${file}\n  ${humanBytes(result.bytes)}, ${result.rows} rows in ${result.tables} tables, ` +
              `took ${seconds(durationMs)}\n  manifest: ${result.manifestFile}` +
              (exported
                ? `\n  workspaces' sync files: ${exported.dir} (${exported.workspaces.length} workspace(s))`
                : ""),
          );
        } catch (error) {
          progress.stop();
          if (error instanceof CliError) throw error;
          throw new CliError(
            `backup failed: ${(error as Error).message}`,
            EXIT.FAILED,
            "check the database is a Millrace database and the folder of --out is writable",
          );
        } finally {
          await client.end().catch(() => {});
        }
      } finally {
        await database.release();
      }
    });

  backup
    .command("restore")
    .description("replace the database's content with a backup (workers pause claiming meanwhile)")
    .argument("<file>", "a file written by `millrace backup create`")
    .option("-y, --yes", "replace a database that is not empty")
    .action(async (file: string, options: { yes?: boolean }, command: Command) => {
      const out = makeOutput(command.optsWithGlobals<GlobalOptions>().json === true);
      const database = await resolveDatabase((line) => out.info(line));
      const progress = lazyProgress(out, "restore");
      try {
        out.info(`restoring ${path.resolve(file)} into ${database.label}`);
        const result = await restoreBackup({
          url: database.url,
          file: path.resolve(file),
          yes: options.yes === true,
          log: (line) => out.info(line),
          onRows: (done, total) => {
            progress.update(done, total);
            if (done >= total) progress.stop();
          },
        });
        progress.stop();
        out.result(
          result,
          () =>
            `restored ${result.rows} rows in ${result.tables} tables into ${result.database}, ` +
            `took ${seconds(result.durationMs)}\n  row counts match the manifest` +
            (result.migrationsApplied.length
              ? `\n  applied newer migrations: ${result.migrationsApplied.join(", ")}`
              : "") +
            (result.jobsRedispatched ? `\n  ${result.jobsRedispatched} queued job(s) dispatched again` : ""),
        );
      } finally {
        progress.stop();
        await database.release();
      }
    });
}
