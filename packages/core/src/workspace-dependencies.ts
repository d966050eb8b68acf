// Windmill's workspace dependencies: a workspace's shared requirements file per language
// (`dependencies/requirements.in`, `dependencies/package.json` in a wmill repository), the
// default one or named ones. `wmill sync push` and `wmill dependencies push` store them here;
// every push is a new version and the latest unarchived one is current.
import { recordAudit } from "./audit/index.ts";
import type { CoreContext } from "./context.ts";
import { invalidInput, notFound } from "./errors.ts";
import { requirePermission } from "./permissions.ts";
import type { Membership } from "./membership.ts";

// The languages whose files a wmill repository's `dependencies/` holds (kept as they are, so that
// such a repository pushes unchanged, also for languages Millrace does not run), and deno.
const LANGUAGES = ["python3", "bun", "nativets", "deno", "php", "go", "powershell"] as const;
const MAX_CONTENT_BYTES = 512 * 1024;
const NAME = /^[A-Za-z0-9_.-]{1,100}$/;

export interface WorkspaceDependenciesView {
  id: number;
  workspaceId: string;
  language: string;
  name: string | null;
  description: string | null;
  content: string;
  archived: boolean;
  createdAt: Date;
}

function checkLanguage(language: string): string {
  if (!(LANGUAGES as readonly string[]).includes(language))
    throw invalidInput("language", `must be one of ${LANGUAGES.join(", ")}`);
  return language;
}

function checkName(name: string | null | undefined): string | null {
  if (name === undefined || name === null || name === "") return null;
  if (!NAME.test(name)) throw invalidInput("name", "use 1-100 letters, digits, _, . and -");
  return name;
}

export async function createWorkspaceDependencies(
  ctx: CoreContext,
  membership: Membership,
  input: { language: string; name?: string | null; description?: string | null; content: string },
): Promise<WorkspaceDependenciesView> {
  requirePermission(membership, "script.write");
  const language = checkLanguage(input.language);
  const name = checkName(input.name);
  if (Buffer.byteLength(input.content) > MAX_CONTENT_BYTES)
    throw invalidInput("content", `at most ${MAX_CONTENT_BYTES / 1024} KiB`);
  const row = await ctx.db.workspaceDependencies.create({
    data: {
      workspaceId: membership.workspace.id,
      language,
      name,
      description: input.description ?? null,
      content: input.content,
      createdBy: membership.principal.username,
    },
  });
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId: membership.workspace.id,
    operation: "workspace_dependencies.create",
    resource: `${language}${name ? `/${name}` : ""}`,
  });
  return row;
}

/** The current version of the default (`name` null) or a named file; 404 when there is none. */
export async function getLatestWorkspaceDependencies(
  ctx: CoreContext,
  membership: Membership,
  language: string,
  name?: string | null,
): Promise<WorkspaceDependenciesView> {
  requirePermission(membership, "script.read");
  const named = checkName(name);
  const row = await ctx.db.workspaceDependencies.findFirst({
    where: { workspaceId: membership.workspace.id, language, name: named, archived: false },
    orderBy: { id: "desc" },
  });
  if (!row) throw notFound(`workspace dependencies for ${language}${named ? ` named ${named}` : ""}`);
  return row;
}

/** The current version of each file. */
export async function listWorkspaceDependencies(
  ctx: CoreContext,
  membership: Membership,
): Promise<WorkspaceDependenciesView[]> {
  requirePermission(membership, "script.read");
  const rows = await ctx.db.workspaceDependencies.findMany({
    where: { workspaceId: membership.workspace.id, archived: false },
    orderBy: [{ language: "asc" }, { name: "asc" }, { id: "desc" }],
  });
  const seen = new Set<string>();
  return rows.filter((row) => {
    const key = `${row.language}\0${row.name ?? ""}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Archives (keeps, no longer current) or deletes every version of one file. */
export async function removeWorkspaceDependencies(
  ctx: CoreContext,
  membership: Membership,
  how: "archive" | "delete",
  language: string,
  name?: string | null,
): Promise<number> {
  requirePermission(membership, "script.write");
  const named = checkName(name);
  const where = { workspaceId: membership.workspace.id, language, name: named };
  const { count } =
    how === "archive"
      ? await ctx.db.workspaceDependencies.updateMany({
          where: { ...where, archived: false },
          data: { archived: true },
        })
      : await ctx.db.workspaceDependencies.deleteMany({ where });
  if (count === 0) throw notFound(`workspace dependencies for ${language}${named ? ` named ${named}` : ""}`);
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId: membership.workspace.id,
    operation: `workspace_dependencies.${how}`,
    resource: `${language}${named ? `/${named}` : ""}`,
  });
  return count;
}
