// What `wmill sync pull` calls (windmill-cli 1.819): the workspace tarball and the two lookups it
// makes first. The tarball holds Windmill's JSON files (packages/sync's snapshotToTarballFiles),
// which wmill turns into the YAML layout a git repository of the workspace holds.
import { exportWorkspaceSnapshot, getWorkspaceEncryptionKey, revealSnapshotSecrets } from "@millrace/core";
import { snapshotToTarballFiles, tarArchive, type WorkspaceSnapshot } from "@millrace/sync";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute, queryBool } from "../define.ts";
import type { Route } from "../router.ts";
import { callMeta } from "./params.ts";

const tarballQuery = z.object({
  archive_type: z.string().optional(),
  plain_secret: queryBool.optional(),
  skip_variables: queryBool.optional(),
  skip_secrets: queryBool.optional(),
  skip_resources: queryBool.optional(),
  skip_resource_types: queryBool.optional(),
  include_schedules: queryBool.optional(),
  include_groups: queryBool.optional(),
  include_key: queryBool.optional(),
  include_settings: queryBool.optional(),
  // wmill.yaml's defaultTs (wmill 1.819 always sends it): which TypeScript runtime a plain `.ts` is.
  default_ts: z.enum(["bun", "deno"], { error: "must be bun or deno" }).optional(),
});

/**
 * The parts of the workspace the flags leave out (Windmill's defaults: no schedules, no groups, no
 * settings). `include_settings` (wmill's --include-settings) adds `settings.json`, which wmill
 * writes as the settings.yaml that git sync commits.
 */
function selected(snapshot: WorkspaceSnapshot, flags: z.output<typeof tarballQuery>): WorkspaceSnapshot {
  return {
    ...snapshot,
    resources: flags.skip_resources ? [] : snapshot.resources,
    resourceTypes: flags.skip_resource_types ? [] : snapshot.resourceTypes,
    variables: flags.skip_variables
      ? []
      : snapshot.variables.filter((v) => !(flags.skip_secrets && v.is_secret)),
    schedules: flags.include_schedules ? snapshot.schedules : [],
    groups: flags.include_groups ? snapshot.groups : [],
    settings: flags.include_settings ? snapshot.settings : undefined,
  };
}

export const syncRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/workspaces/tarball",
    summary: "the workspace as a tar archive (wmill sync pull)",
    tag: "workspace",
    query: tarballQuery,
    response: { contentType: "application/x-tar", description: "the workspace as Windmill's JSON files" },
    handler: async (ctx, { query }) => {
      const membership = await ctx.membership();
      // wmill asks for a zip first and falls back to a tar on exactly this answer.
      if ((query.archive_type ?? "tar") !== "tar") return text("Invalid Archive Type", 400);
      // `plain_secret=true` (`wmill sync pull/push --plain-secrets`): the secrets in plain text,
      // as Windmill answers them to the admins the export is for, each read audited. Without it
      // they leave as this workspace's ciphertext (enc:v2:…), which a push stores back as is.
      // `include_key` (wmill's --include-key): the workspace's key as the `encryption_key` file,
      // read (audited) before the snapshot, so that the secrets exported are all under it.
      const key = query.include_key
        ? (await getWorkspaceEncryptionKey(ctx.services, membership, callMeta(ctx))).key
        : null;
      const snapshot = selected(await exportWorkspaceSnapshot(ctx.services, membership), query);
      if (query.plain_secret) await revealSnapshotSecrets(ctx.services, membership, snapshot, callMeta(ctx));
      const files = snapshotToTarballFiles(snapshot, { defaultTs: query.default_ts });
      // As Windmill names it: a JSON string, which wmill writes as `encryption_key.yaml`.
      if (key !== null) files.set("encryption_key.json", JSON.stringify(key));
      const body = tarArchive(files);
      return new Response(new Uint8Array(body), {
        status: 200,
        headers: {
          "content-type": "application/x-tar",
          "content-disposition": `attachment; filename="${membership.workspace.id}.tar"`,
        },
      });
    },
  }),
  defineRoute({
    // Items that differ per workspace of one repository (Windmill's workspace-specific files):
    // Millrace has none.
    method: "GET",
    pattern: "/api/w/:workspace/workspaces/list_ws_specific",
    summary: "listWsSpecific",
    tag: "workspace",
    response: z.array(z.unknown()),
    handler: async (ctx) => {
      await ctx.membership();
      return json([]);
    },
  }),
  defineRoute({
    // Resource types whose value wmill writes as a file of its own (`.resource.file.<ext>`):
    // none of Millrace's.
    method: "GET",
    pattern: "/api/w/:workspace/resources/file_resource_type_to_file_ext_map",
    summary: "fileResourceTypeToFileExtMap",
    tag: "resource",
    response: z.record(z.string(), z.unknown()),
    handler: async (ctx) => {
      await ctx.membership();
      return json({});
    },
  }),
];
