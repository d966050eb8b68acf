// `millrace workspace add|list|switch`: the saved workspaces (config.ts), like wmill's.
import type { Command } from "commander";
import { ApiClient } from "../client.ts";
import { configPath, readConfig, writeConfig, type SavedWorkspace } from "../config.ts";
import type { GlobalOptions } from "../context.ts";
import { CliError, EXIT } from "../exit-codes.ts";
import { makeOutput } from "../output.ts";

interface WhoAmI {
  username?: string;
  email?: string;
  is_admin?: boolean;
  is_super_admin?: boolean;
}

export function registerWorkspaceCommands(program: Command): void {
  const workspace = program
    .command("workspace")
    .description("saved workspaces (server URL, workspace, token)");

  workspace
    .command("add")
    .description("check a token against a workspace, save it under <name> and make it the active one")
    .argument("<name>", "a local name for it")
    .argument("<workspace_id>", "the workspace's id on the server")
    .argument("<url>", "the server's base URL, e.g. http://localhost:8000")
    .addHelpText("after", "\nThe token is the global --token option (or $MILLRACE_TOKEN).")
    .action(async (name: string, workspaceId: string, url: string, _options, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const out = makeOutput(globals.json === true);
      const token = globals.token ?? process.env.MILLRACE_TOKEN; // eslint-disable-line no-restricted-properties
      if (!token)
        throw new CliError(
          "no token given",
          EXIT.USAGE,
          "pass --token <token> (create one under API tokens, or POST /api/users/tokens/create)",
        );
      if (!/^https?:\/\//.test(url))
        throw new CliError(
          `not a URL: ${url}`,
          EXIT.USAGE,
          "give the server's URL, e.g. http://localhost:8000",
        );
      const saved: SavedWorkspace = { name, url: url.replace(/\/+$/, ""), workspaceId, token };
      const client = new ApiClient({ url: saved.url, workspaceId, token });
      const me = await client.json<WhoAmI>("GET", client.ws("/users/whoami"));
      const config = readConfig();
      config.workspaces = [...config.workspaces.filter((w) => w.name !== name), saved];
      config.active = name;
      writeConfig(config);
      const who = me.username ?? me.email ?? "?";
      out.result(
        { name, workspaceId, url: saved.url, user: who, active: true, config: configPath() },
        () => `saved workspace ${name} (${workspaceId} on ${saved.url}) as ${who}; it is now the active one`,
      );
    });

  workspace
    .command("list")
    .description("list the saved workspaces (the active one marked *)")
    .action((_options, command: Command) => {
      const out = makeOutput(command.optsWithGlobals<GlobalOptions>().json === true);
      const config = readConfig();
      const rows = config.workspaces.map((w) => ({
        name: w.name,
        workspaceId: w.workspaceId,
        url: w.url,
        active: w.name === config.active,
      }));
      out.result(rows, () =>
        rows.length === 0
          ? "no saved workspace: add one with `millrace workspace add <name> <workspace_id> <url> --token <token>`"
          : rows.map((w) => `${w.active ? "*" : " "} ${w.name}\t${w.workspaceId}\t${w.url}`).join("\n"),
      );
    });

  workspace
    .command("switch")
    .description("make a saved workspace the active one")
    .argument("<name>", "its local name")
    .action((name: string, _options, command: Command) => {
      const out = makeOutput(command.optsWithGlobals<GlobalOptions>().json === true);
      const config = readConfig();
      const found = config.workspaces.find((w) => w.name === name);
      if (!found)
        throw new CliError(
          `no saved workspace named ${name}`,
          EXIT.NOT_FOUND,
          config.workspaces.length
            ? `saved: ${config.workspaces.map((w) => w.name).join(", ")} (see \`millrace workspace list\`)`
            : "add one with `millrace workspace add <name> <workspace_id> <url> --token <token>`",
        );
      config.active = name;
      writeConfig(config);
      out.result(
        { name, workspaceId: found.workspaceId, url: found.url, active: true },
        () => `active workspace: ${name} (${found.workspaceId} on ${found.url})`,
      );
    });
}
