import {
  changeWorkspaceColor,
  editLargeFileStorage,
  editUnsupportedSetting,
  largeFileStorageSetting,
  updateOperatorSettings,
  exportInstanceGroups,
  overwriteInstanceGroups,
  windmillWorkspaceSettings,
} from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { Route } from "../router.ts";
import { textAnswer } from "./params.ts";

/**
 * Windmill's workspace settings that Millrace does not have (see core/windmill-settings.ts): read
 * as unset; an edit is answered as Windmill answers it when it leaves the setting unset, and
 * refused with a 400 naming the setting otherwise. `wmill sync push` of settings goes through here.
 */
const unsupported: { pattern: string; summary: string; what: string; field: string }[] = [
  { pattern: "edit_webhook", summary: "editWebhook", what: "workspace webhook", field: "webhook" },
  {
    pattern: "edit_error_handler",
    summary: "editErrorHandler",
    what: "workspace error handler",
    field: "body",
  },
  {
    pattern: "edit_success_handler",
    summary: "editSuccessHandler",
    what: "workspace success handler",
    field: "body",
  },
  { pattern: "edit_auto_invite", summary: "editAutoInvite", what: "auto-invite of new users", field: "body" },
  { pattern: "edit_copilot_config", summary: "editCopilotConfig", what: "AI assistant", field: "body" },
  { pattern: "edit_instance_groups", summary: "editInstanceGroups", what: "instance groups", field: "body" },
  {
    pattern: "edit_slack_command",
    summary: "editSlackCommand",
    what: "Slack integration",
    field: "slack_command_script",
  },
  { pattern: "default_scripts", summary: "editDefaultScripts", what: "default scripts", field: "body" },
  { pattern: "connect_slack", summary: "connectSlack", what: "Slack integration", field: "bot_token" },
  {
    pattern: "slack_oauth_config",
    summary: "setWorkspaceSlackOauthConfig",
    what: "Slack integration",
    field: "slack_oauth_client_id",
  },
  {
    pattern: "critical_alerts/mute",
    summary: "workspaceMuteCriticalAlertsUi",
    what: "critical alerts to mute",
    field: "mute_critical_alerts",
  },
];

export const windmillSettingRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/workspaces/get_settings",
    summary: "getSettings",
    tag: "workspace",
    response: z.object({
      workspace_id: z.string(),
      mute_critical_alerts: z.boolean(),
      color: z.string().optional(),
      operator_settings: z.record(z.string(), z.boolean()),
      large_file_storage: z.record(z.string(), z.unknown()).optional(),
    }),
    handler: async (ctx) => {
      const membership = await ctx.membership();
      const storage = await largeFileStorageSetting(ctx.services, membership);
      return json({
        ...windmillWorkspaceSettings(membership),
        ...(storage ? { large_file_storage: storage } : {}),
      });
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/workspaces/edit_large_file_storage_config",
    summary: "editLargeFileStorageConfig",
    tag: "workspace",
    body: z.object({ large_file_storage: z.unknown().optional() }),
    response: textAnswer("Edited the object storage of <workspace>"),
    handler: async (ctx, { body }) => {
      const membership = await ctx.membership();
      await editLargeFileStorage(ctx.services, membership, body.large_file_storage);
      return text(`Edited the object storage of ${membership.workspace.id}`);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/workspaces/change_workspace_color",
    summary: "changeWorkspaceColor",
    tag: "workspace",
    body: z.object({ color: z.string().nullish() }),
    response: textAnswer("Changed the color of <workspace>"),
    handler: async (ctx, { body }) => {
      const membership = await ctx.membership();
      await changeWorkspaceColor(ctx.services, membership, body.color);
      return text(`Changed the color of ${membership.workspace.id}`);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/workspaces/operator_settings",
    summary: "updateOperatorSettings",
    tag: "workspace",
    body: z.record(z.string(), z.boolean().nullish()),
    response: textAnswer("Operator settings of <workspace> (Millrace's fixed operator role)"),
    handler: async (ctx, { body }) => {
      const membership = await ctx.membership();
      updateOperatorSettings(membership, body);
      return text(`Operator settings of ${membership.workspace.id} are Millrace's fixed operator role`);
    },
  }),

  ...unsupported.map((setting) =>
    defineRoute({
      method: "POST",
      pattern: `/api/w/:workspace/workspaces/${setting.pattern}`,
      summary: setting.summary,
      tag: "workspace",
      // Windmill's body for each (all optional); the whole body must leave the setting unset.
      body: z.record(z.string(), z.unknown()).nullish(),
      response:
        setting.summary === "editCopilotConfig"
          ? z.object({
              effective_ai_config: z.record(z.string(), z.unknown()),
              has_instance_ai_config: z.boolean(),
              uses_instance_ai_config: z.boolean(),
            })
          : textAnswer(`Edited <setting> of <workspace>`),
      handler: async (ctx, { body }) => {
        const membership = await ctx.membership();
        const value = setting.field === "body" ? body : body?.[setting.field];
        editUnsupportedSetting(membership, setting.field, value, setting.what);
        if (setting.summary === "editCopilotConfig") {
          // Windmill answers the AI settings now in effect: none, and no instance-wide ones.
          return json({
            effective_ai_config: {},
            has_instance_ai_config: false,
            uses_instance_ai_config: false,
          });
        }
        return text(`Edited ${setting.what} of ${membership.workspace.id} (unset)`);
      },
    }),
  ),

  defineRoute({
    method: "DELETE",
    pattern: "/api/w/:workspace/workspaces/slack_oauth_config",
    summary: "deleteWorkspaceSlackOauthConfig",
    tag: "workspace",
    response: textAnswer("Deleted the Slack OAuth config (there is none)"),
    handler: async (ctx) => {
      editUnsupportedSetting(await ctx.membership(), "slack_oauth_config", null, "Slack integration");
      return text("Deleted the Slack OAuth config (Millrace has none)");
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/oauth/disconnect_slack",
    summary: "disconnectSlack",
    tag: "workspace",
    response: textAnswer("Disconnected Slack (it never is connected)"),
    handler: async (ctx) => {
      editUnsupportedSetting(await ctx.membership(), "slack", null, "Slack integration");
      return text("Slack is not connected (Millrace has no Slack integration)");
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/groups/export",
    summary: "exportInstanceGroups",
    tag: "group",
    response: z.array(z.never()),
    handler: async (ctx) => json(exportInstanceGroups(await ctx.principal())),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/groups/overwrite",
    summary: "overwriteInstanceGroups",
    tag: "group",
    body: z.array(z.unknown(), { error: "must be a list of instance groups" }),
    response: textAnswer("Overwrote the instance groups (none)"),
    handler: async (ctx, { body }) => {
      overwriteInstanceGroups(await ctx.principal(), body);
      return text("Overwrote the instance groups (Millrace has none)");
    },
  }),
];
