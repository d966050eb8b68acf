// What every command gets: the global options resolved into an API client and an output.
import type { Command } from "commander";
import { ApiClient } from "./client.ts";
import { resolveTarget } from "./config.ts";
import { makeOutput, type Output } from "./output.ts";

export interface GlobalOptions {
  url?: string;
  token?: string;
  workspace?: string;
  json?: boolean;
}

export interface CommandContext {
  client: ApiClient;
  out: Output;
  options: GlobalOptions;
}

/** The context of the command being run (global options come from the root program). */
export function commandContext(command: Command): CommandContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  return { client: new ApiClient(resolveTarget(options)), out: makeOutput(options.json === true), options };
}
