#!/usr/bin/env node
// `millrace`: the command-line client. Today it checks a server; workspace and sync commands
// arrive with the git sync work. Teams can also point Windmill's own `wmill` CLI at Millrace.
import { parseArgs } from "node:util";

const USAGE = `usage: millrace <command> [--url URL] [--token TOKEN]

commands:
  version    print the server's version (GET /api/version)
  whoami     list the workspaces the token can see (GET /api/workspaces/list)

--url defaults to $MILLRACE_URL or http://localhost:8000; --token to $MILLRACE_TOKEN.`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { url: { type: "string" }, token: { type: "string" }, help: { type: "boolean", short: "h" } },
});
// eslint-disable-next-line no-restricted-properties
const env = process.env;
const base = (values.url ?? env.MILLRACE_URL ?? "http://localhost:8000").replace(/\/$/, "");
const token = values.token ?? env.MILLRACE_TOKEN;

async function call(path: string): Promise<string> {
  const response = await fetch(`${base}${path}`, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
  const body = await response.text();
  if (!response.ok) throw new Error(`${response.status} ${body}`);
  return body;
}

const command = positionals[0];
try {
  if (values.help || !command) console.log(USAGE);
  else if (command === "version") console.log(await call("/api/version"));
  else if (command === "whoami") console.log(await call("/api/workspaces/list"));
  else {
    console.error(`unknown command "${command}"\n\n${USAGE}`);
    process.exit(2);
  }
} catch (error) {
  console.error(`millrace: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
