// What `wmill sync pull` calls (windmill-cli 1.819): the workspace tarball and the two lookups it
// makes first. The tarball holds Windmill's JSON files (packages/sync's snapshotToTarballFiles),
// which wmill turns into the YAML layout a git repository of the workspace holds.
import { AppError, exportWorkspaceSnapshot } from "@millrace/core";
import { snapshotToTarballFiles, tarArchive, type WorkspaceSnapshot } from "@millrace/sync";
import { json, text } from "../../http.ts";
import type { Route } from "../router.ts";

/** `true`/`false` query flags of the tarball; anything else is refused naming the flag. */
function flag(url: URL, name: string, fallback: boolean): boolean {
  const value = url.searchParams.get(name);
  if (value === null || value === "") return fallback;
  if (value === "true" || value === "false") return value === "true";
  throw new AppError("INVALID_INPUT", `${name}: must be true or false`, name);
}

/** The parts of the workspace the flags leave out (Windmill's defaults: no schedules, no groups). */
function selected(snapshot: WorkspaceSnapshot, url: URL): WorkspaceSnapshot {
  const skipVariables = flag(url, "skip_variables", false);
  const skipSecrets = flag(url, "skip_secrets", false);
  return {
    ...snapshot,
    resources: flag(url, "skip_resources", false) ? [] : snapshot.resources,
    resourceTypes: flag(url, "skip_resource_types", false) ? [] : snapshot.resourceTypes,
    variables: skipVariables ? [] : snapshot.variables.filter((v) => !(skipSecrets && v.is_secret)),
    schedules: flag(url, "include_schedules", false) ? snapshot.schedules : [],
    groups: flag(url, "include_groups", false) ? snapshot.groups : [],
  };
}

export const syncRoutes: Route[] = [
  {
    method: "GET",
    pattern: "/api/w/:workspace/workspaces/tarball",
    handler: async (ctx) => {
      const membership = await ctx.membership();
      // wmill asks for a zip first and falls back to a tar on exactly this answer.
      if ((ctx.url.searchParams.get("archive_type") ?? "tar") !== "tar")
        return text("Invalid Archive Type", 400);
      // `plain_secret=true` is what `wmill sync push --plain-secrets` (an import of a Windmill
      // repository) asks too: answered, but secrets still leave encrypted (enc:v1:…), never in
      // plain text. wmill then compares a local plain secret with the decrypted value before
      // writing, and Millrace stores a pushed value that is its own ciphertext as is.
      flag(ctx.url, "plain_secret", false);
      const snapshot = selected(await exportWorkspaceSnapshot(ctx.services, membership), ctx.url);
      const body = tarArchive(snapshotToTarballFiles(snapshot));
      return new Response(new Uint8Array(body), {
        status: 200,
        headers: {
          "content-type": "application/x-tar",
          "content-disposition": `attachment; filename="${membership.workspace.id}.tar"`,
        },
      });
    },
  },
  {
    // Items that differ per workspace of one repository (Windmill's workspace-specific files):
    // Millrace has none.
    method: "GET",
    pattern: "/api/w/:workspace/workspaces/list_ws_specific",
    handler: async (ctx) => {
      await ctx.membership();
      return json([]);
    },
  },
  {
    // Resource types whose value wmill writes as a file of its own (`.resource.file.<ext>`):
    // none of Millrace's.
    method: "GET",
    pattern: "/api/w/:workspace/resources/file_resource_type_to_file_ext_map",
    handler: async (ctx) => {
      await ctx.membership();
      return json({});
    },
  },
];
