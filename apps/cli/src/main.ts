#!/usr/bin/env node
// `millrace`: the command-line client (commander). Each group of commands lives in
// `commands/<group>.ts`; errors end here, as one line, a hint and an exit code (exit-codes.ts).
import { Command, CommanderError } from "commander";
import { registerBackupCommands } from "./commands/backup.ts";
import { registerJobCommands } from "./commands/job.ts";
import { registerScriptCommands } from "./commands/script.ts";
import { registerServerCommands } from "./commands/server.ts";
import { registerSyncCommands } from "./commands/sync.ts";
import { registerWorkspaceCommands } from "./commands/workspace.ts";
import { CliError, EXIT } from "./exit-codes.ts";

const program = new Command("millrace")
  .description("Millrace command-line client")
  .option(
    "--url <url>",
    "server base URL (default: $MILLRACE_URL, the saved workspace, http://localhost:8000)",
  )
  .option("--token <token>", "API token (default: $MILLRACE_TOKEN or the saved workspace's)")
  .option("-w, --workspace <name>", "saved workspace name or workspace id (default: the active one)")
  .option("--json", "print one JSON document on stdout instead of text")
  .showHelpAfterError()
  .exitOverride();

registerServerCommands(program);
registerSyncCommands(program);
registerWorkspaceCommands(program);
registerScriptCommands(program);
registerJobCommands(program);
registerBackupCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end here too, with exit code 0.
    process.exit(error.exitCode === 0 ? EXIT.OK : EXIT.USAGE);
  }
  if (error instanceof CliError) {
    console.error(`millrace: ${error.message}`);
    if (error.hint) console.error(`  → ${error.hint}`);
    process.exit(error.exitCode);
  }
  console.error(`millrace: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(EXIT.FAILED);
}
