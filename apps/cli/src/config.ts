// The CLI's saved workspaces (`millrace workspace add`), like wmill's remotes: a JSON file under
// $XDG_CONFIG_HOME/millrace (or ~/.config/millrace), written 0600 because it holds tokens.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CliError, EXIT } from "./exit-codes.ts";

export interface SavedWorkspace {
  /** The local name (`--workspace` picks it); defaults to the workspace id. */
  name: string;
  /** Base URL of the server, without `/api`. */
  url: string;
  workspaceId: string;
  token: string;
}

export interface CliConfig {
  active: string | null;
  workspaces: SavedWorkspace[];
}

// eslint-disable-next-line no-restricted-properties
const env = process.env;

export function configPath(): string {
  if (env.MILLRACE_CONFIG) return env.MILLRACE_CONFIG;
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), ".config");
  return path.join(base, "millrace", "config.json");
}

export function readConfig(): CliConfig {
  const file = configPath();
  if (!fs.existsSync(file)) return { active: null, workspaces: [] };
  try {
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<CliConfig>;
    return { active: parsed.active ?? null, workspaces: parsed.workspaces ?? [] };
  } catch (error) {
    throw new CliError(
      `cannot read ${file}: ${(error as Error).message}`,
      EXIT.FAILED,
      "fix or delete the file, then run `millrace workspace add` again",
    );
  }
}

export function writeConfig(config: CliConfig): void {
  const file = configPath();
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  // Written to a temporary file and renamed, so an interrupted write never loses saved tokens.
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temporary, file);
}

export interface Target {
  url: string;
  workspaceId: string | null;
  token: string | null;
}

/**
 * Where a command talks to: `--url`/`--token`/`--workspace` first, then $MILLRACE_URL /
 * $MILLRACE_TOKEN / $MILLRACE_WORKSPACE, then the saved workspace (named by `--workspace`, else the
 * active one).
 */
export function resolveTarget(options: { url?: string; token?: string; workspace?: string }): Target {
  const config = readConfig();
  const wanted = options.workspace ?? env.MILLRACE_WORKSPACE;
  const saved =
    config.workspaces.find((w) => w.name === wanted) ??
    (wanted ? undefined : config.workspaces.find((w) => w.name === config.active));
  const url = options.url ?? env.MILLRACE_URL ?? saved?.url ?? "http://localhost:8000";
  return {
    url: url.replace(/\/+$/, ""),
    workspaceId: saved?.workspaceId ?? wanted ?? null,
    token: options.token ?? env.MILLRACE_TOKEN ?? saved?.token ?? null,
  };
}
