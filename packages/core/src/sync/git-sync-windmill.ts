// Windmill's editWorkspaceGitSyncConfig (what `wmill sync push --include-settings` sends for a
// workspace's `git_sync` settings), applied to Millrace's git sync: Windmill names a
// `git_repository` resource ({url, branch}) per repository; Millrace links a workspace to one
// repository and commits every path of the kinds chosen.
import { AppError, invalidInput } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import { resolveJobArgs } from "../resources/job-args.ts";
import type { SecretsContext } from "../secrets/context.ts";
import type { Membership } from "../membership.ts";
import { deleteGitSyncSettings, setGitSyncSettings } from "./git-sync.ts";
import type { SyncKind } from "./repository.ts";

export interface WindmillGitRepositorySettings {
  git_repo_resource_path: string;
  settings?: { include_path?: string[]; include_type?: string[]; exclude_path?: string[] } | null;
}

// Windmill's object types as Millrace's sync kinds; the others (apps, triggers, keys,
// workspace dependencies, datatable migrations) are not committed by Millrace's git sync.
const KINDS: Record<string, SyncKind> = {
  script: "scripts",
  flow: "flows",
  folder: "folders",
  resource: "resources",
  resourcetype: "resource_types",
  variable: "variables",
  secret: "secrets",
  schedule: "schedules",
  group: "groups",
  user: "members",
  settings: "settings",
};
// What Windmill's settings default to: every folder's items.
const DEFAULT_INCLUDE_PATH = ["f/**"];

export async function applyWindmillGitSyncSettings(
  ctx: SecretsContext,
  membership: Membership,
  settings: { repositories?: WindmillGitRepositorySettings[] | null } | null | undefined,
): Promise<void> {
  requirePermission(membership, "workspace.manage");
  const repositories = settings?.repositories ?? [];
  if (repositories.length === 0) {
    // No repository: the workspace is not synced (unlinking one that is not linked is a no-op).
    await deleteGitSyncSettings(ctx, membership).catch((error: unknown) => {
      if (!(error instanceof AppError && error.code === "NOT_FOUND")) throw error;
    });
    return;
  }
  const field = "git_sync_settings.repositories";
  if (repositories.length > 1)
    throw invalidInput(`${field}.1`, "Millrace links a workspace to one git repository");
  const repository = repositories[0]!;
  const include = repository.settings?.include_path ?? DEFAULT_INCLUDE_PATH;
  if (
    include.length !== 1 ||
    include[0] !== DEFAULT_INCLUDE_PATH[0] ||
    repository.settings?.exclude_path?.length
  )
    throw invalidInput(
      `${field}.0.settings.include_path`,
      "Millrace's git sync commits every path of the workspace (only f/** and no exclude_path are accepted)",
    );
  const path = repository.git_repo_resource_path.replace(/^\$res:/, "");
  const resolved = await resolveJobArgs(
    ctx,
    membership.workspace.id,
    `u/${membership.principal.username}`,
    { repository: `$res:${path}` },
    null,
  );
  const value = resolved.repository as { url?: unknown; branch?: unknown } | null;
  if (!value || typeof value.url !== "string")
    throw invalidInput(
      `${field}.0.git_repo_resource_path`,
      `${path} is not a git_repository resource with a url`,
    );
  let url: URL;
  try {
    url = new URL(value.url);
  } catch {
    throw invalidInput(`${field}.0.git_repo_resource_path`, `the url of ${path} is not a URL`);
  }
  // Windmill keeps the token in the URL; Millrace stores it apart, encrypted.
  const username = decodeURIComponent(url.username) || null;
  const password = decodeURIComponent(url.password) || null;
  url.username = "";
  url.password = "";
  const types = repository.settings?.include_type;
  const kinds = types ? [...new Set(types.flatMap((type) => (KINDS[type] ? [KINDS[type]] : [])))] : [];
  // An empty list is "every kind" to Millrace: a list of only kinds it does not commit is refused.
  if (types && kinds.length === 0)
    throw invalidInput(`${field}.0.settings.include_type`, "names no kind Millrace's git sync commits");
  await setGitSyncSettings(ctx, membership, {
    remote_url: url.toString(),
    branch: typeof value.branch === "string" && value.branch ? value.branch : "main",
    username,
    password,
    include_kinds: kinds,
  });
}
