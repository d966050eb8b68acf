// `millrace version` and `millrace whoami`: the smallest calls, to check a URL and a token.
import type { Command } from "commander";
import { commandContext } from "../context.ts";

export function registerServerCommands(program: Command): void {
  program
    .command("version")
    .description("print the server's version (GET /api/version)")
    .action(async (_options, command: Command) => {
      const { client, out } = commandContext(command);
      const response = await client.request("GET", "/api/version");
      out.result((await response.text()).trim());
    });
  program
    .command("whoami")
    .description("list the workspaces the token can see")
    .action(async (_options, command: Command) => {
      const { client, out } = commandContext(command);
      const workspaces = await client.json<{ id: string; name: string }[]>("GET", "/api/workspaces/list");
      out.result(workspaces, (value) =>
        (value as { id: string; name: string }[]).map((w) => `${w.id}\t${w.name}`).join("\n"),
      );
    });
}
