import {
  addMember,
  createAccount,
  deleteAccount,
  deleteToken,
  getAccount,
  getMember,
  isOwnerOfPath,
  listAccounts,
  listMembers,
  listTokens,
  removeMember,
  roleFromFlags,
  updateAccount,
  updateMember,
  type MemberView,
  type Membership,
  type Principal,
  type UserView,
} from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute, queryBool, queryInt } from "../define.ts";
import type { RestContext, Route } from "../router.ts";

const ROLE_LABEL = { admin: "Admin", developer: "Developer", operator: "Operator" } as const;

/**
 * Windmill's User. `role` is Millrace's addition: operators' scripts (seed 000's governance
 * report among them) read `role == "Admin"` to count admins.
 */
export function windmillUser(member: MemberView) {
  return {
    email: member.email,
    username: member.username,
    name: member.name ?? undefined,
    is_admin: member.role === "admin",
    is_super_admin: member.isSuperAdmin,
    operator: member.role === "operator",
    role: ROLE_LABEL[member.role],
    disabled: member.disabled,
    created_at: member.createdAt.toISOString(),
    groups: member.groups,
    folders: member.foldersWrite,
    folders_read: member.foldersRead,
    folders_owners: member.foldersOwner,
  };
}

function globalUserInfo(user: UserView) {
  return {
    email: user.email,
    username: user.username,
    name: user.name ?? undefined,
    login_type: "password" as const,
    super_admin: user.isSuperAdmin,
    verified: true,
    first_time_user: false,
    role_source: "manual" as const,
    disabled: user.disabled,
    created_at: user.createdAt.toISOString(),
  };
}

/** windmill-client's User (with Millrace's `role`, see windmillUser). */
const windmillUserShape = z.object({
  email: z.string(),
  username: z.string(),
  name: z.string().optional(),
  is_admin: z.boolean(),
  is_super_admin: z.boolean(),
  operator: z.boolean(),
  role: z.enum(["Admin", "Developer", "Operator"]),
  disabled: z.boolean(),
  created_at: z.string(),
  groups: z.array(z.string()),
  folders: z.array(z.string()),
  folders_read: z.array(z.string()),
  folders_owners: z.array(z.string()),
  non_member: z.boolean().optional(),
});

/** windmill-client's GlobalUserInfo. */
const globalUserInfoShape = z.object({
  email: z.string(),
  username: z.string(),
  name: z.string().optional(),
  login_type: z.literal("password"),
  super_admin: z.boolean(),
  verified: z.boolean(),
  first_time_user: z.boolean(),
  role_source: z.literal("manual"),
  disabled: z.boolean(),
  created_at: z.string().optional(),
});

const role = z.enum(["admin", "developer", "operator"]);
const userParams = z.object({ workspace: z.string(), username: z.string() });

/** The caller as a workspace user; a superadmin who is no member shows as a non-member admin. */
async function whoami(ctx: RestContext, membership: Membership, principal: Principal) {
  const members = await listMembers(ctx.services, membership);
  const me = members.find((m) => m.userId === principal.userId);
  if (me) return windmillUser(me);
  return {
    ...windmillUser({
      userId: principal.userId,
      email: principal.email,
      username: principal.username,
      name: null,
      role: membership.role,
      disabled: false,
      isSuperAdmin: principal.isSuperAdmin,
      createdAt: membership.workspace.createdAt,
      groups: [],
      foldersWrite: [],
      foldersRead: [],
      foldersOwner: [],
    }),
    non_member: true,
  };
}

/** Windmill's add_user body (`username` is ignored: Millrace usernames are instance-wide). */
const addUserBody = z.object({
  email: z.string(),
  is_admin: z.boolean().nullish(),
  operator: z.boolean().nullish(),
  role: role.nullish(),
  username: z.string().nullish(),
});

function addToWorkspace(pattern: string, summary: string): Route {
  return defineRoute({
    method: "POST",
    pattern,
    summary,
    tag: "user",
    body: addUserBody,
    response: { contentType: "text/plain", description: "Added <email> to the workspace as <role>" },
    handler: async (ctx, { body }) => {
      const added = await addMember(ctx.services, await ctx.membership(), {
        email: body.email,
        role: body.role ?? roleFromFlags(body.is_admin, body.operator),
      });
      return text(`Added ${added.email} to the workspace as ${added.role}`, 201);
    },
  });
}

export const userRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/users/whoami",
    summary: "globalWhoami",
    tag: "user",
    response: globalUserInfoShape,
    handler: async (ctx) => {
      const principal = await ctx.principal();
      const user = await getAccount(ctx.services, principal);
      if (!user) {
        // SUPERADMIN_SECRET: a superadmin with no account behind it.
        return json({
          email: principal.email,
          username: principal.username,
          login_type: "password",
          super_admin: principal.isSuperAdmin,
          verified: true,
          first_time_user: false,
          role_source: "manual",
          disabled: false,
        });
      }
      return json(globalUserInfo(user));
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/users/email",
    summary: "getCurrentEmail",
    tag: "user",
    response: { contentType: "text/plain", description: "the caller's email address" },
    handler: async (ctx) => text((await ctx.principal()).email),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/users/list_as_super_admin",
    summary: "listUsersAsSuperAdmin",
    tag: "user",
    query: z.object({
      page: queryInt.optional(),
      per_page: queryInt.optional(),
      active_only: queryBool.optional(),
    }),
    response: z.array(globalUserInfoShape),
    handler: async (ctx, { query }) => {
      const users = await listAccounts(ctx.services, await ctx.principal());
      const perPage = Math.min(query.per_page ?? 1000, 1000);
      const page = Math.max(query.page ?? 1, 1);
      return json(
        users
          .filter((u) => !query.active_only || !u.disabled)
          .slice((page - 1) * perPage, page * perPage)
          .map(globalUserInfo),
      );
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/users/list",
    summary: "listUsers (every account of the instance)",
    tag: "user",
    response: z.array(globalUserInfoShape),
    handler: async (ctx) =>
      json((await listAccounts(ctx.services, await ctx.principal())).map(globalUserInfo)),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/users/create",
    summary: "createUserGlobally",
    tag: "user",
    body: z.object({
      email: z.string(),
      password: z.string(),
      name: z.string().nullish(),
      company: z.string().nullish(),
      super_admin: z.boolean().nullish(),
    }),
    response: { contentType: "text/plain", description: "Created user <email> (<username>)" },
    handler: async (ctx, { body }) => {
      const user = await createAccount(ctx.services, await ctx.principal(), {
        email: body.email,
        password: body.password,
        name: body.name ?? null,
        superAdmin: body.super_admin ?? false,
      });
      return text(`Created user ${user.email} (${user.username})`, 201);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/users/update/:email",
    summary: "globalUserUpdate",
    tag: "user",
    params: z.object({ email: z.string() }),
    body: z.object({
      is_super_admin: z.boolean().nullish(),
      disabled: z.boolean().nullish(),
      name: z.string().nullish(),
    }),
    response: { contentType: "text/plain", description: "Updated user <email>" },
    handler: async (ctx, { params, body }) => {
      const user = await updateAccount(ctx.services, await ctx.principal(), params.email, {
        isSuperAdmin: body.is_super_admin ?? undefined,
        disabled: body.disabled ?? undefined,
        name: body.name ?? undefined,
      });
      return text(`Updated user ${user.email}`);
    },
  }),

  defineRoute({
    method: "DELETE",
    pattern: "/api/users/delete/:email",
    summary: "globalUserDelete",
    tag: "user",
    params: z.object({ email: z.string() }),
    response: { contentType: "text/plain", description: "Deleted user <email>" },
    handler: async (ctx, { params }) => {
      const user = await deleteAccount(ctx.services, await ctx.principal(), params.email);
      return text(`Deleted user ${user.email}`);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/users/tokens/list",
    summary: "listTokens",
    tag: "user",
    query: z.object({ exclude_ephemeral: queryBool.optional() }),
    response: z.array(
      z.object({
        label: z.string().optional(),
        token_prefix: z.string(),
        expiration: z.string().optional(),
        created_at: z.string(),
        last_used_at: z.string(),
        workspace_id: z.string().optional(),
        scopes: z.array(z.string()).optional(),
        read_only: z.boolean(),
        kind: z.string(),
      }),
    ),
    handler: async (ctx, { query }) => {
      const tokens = await listTokens(ctx.services, await ctx.principal(), {
        excludeEphemeral: query.exclude_ephemeral ?? false,
      });
      return json(
        tokens.map((t) => ({
          label: t.label ?? undefined,
          token_prefix: t.tokenPrefix,
          expiration: t.expiresAt?.toISOString(),
          created_at: t.createdAt.toISOString(),
          last_used_at: (t.lastUsedAt ?? t.createdAt).toISOString(),
          workspace_id: t.workspaceId ?? undefined,
          scopes: t.scopePath ? [`run:${t.scopePath}`] : undefined,
          read_only: false,
          kind: t.kind,
        })),
      );
    },
  }),

  defineRoute({
    method: "DELETE",
    pattern: "/api/users/tokens/delete/:token_prefix",
    summary: "deleteToken",
    tag: "user",
    params: z.object({ token_prefix: z.string() }),
    response: { contentType: "text/plain", description: "Deleted token" },
    handler: async (ctx, { params }) => {
      await deleteToken(ctx.services, await ctx.principal(), params.token_prefix);
      return text("Deleted token");
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/users/whoami",
    summary: "whoami",
    tag: "user",
    response: windmillUserShape,
    handler: async (ctx) => json(await whoami(ctx, await ctx.membership(), await ctx.principal())),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/users/list",
    summary: "listUsers",
    tag: "user",
    response: z.array(windmillUserShape),
    handler: async (ctx) => json((await listMembers(ctx.services, await ctx.membership())).map(windmillUser)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/users/list_usernames",
    summary: "listUsernames",
    tag: "user",
    response: z.array(z.string()),
    handler: async (ctx) =>
      json((await listMembers(ctx.services, await ctx.membership())).map((m) => m.username)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/users/get/:username",
    summary: "getUser",
    tag: "user",
    params: userParams,
    response: windmillUserShape,
    handler: async (ctx, { params }) =>
      json(windmillUser(await getMember(ctx.services, await ctx.membership(), params.username))),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/users/whois/:username",
    summary: "whois",
    tag: "user",
    params: userParams,
    response: windmillUserShape,
    handler: async (ctx, { params }) =>
      json(windmillUser(await getMember(ctx.services, await ctx.membership(), params.username))),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/users/username_to_email/:username",
    summary: "usernameToEmail",
    tag: "user",
    params: userParams,
    response: { contentType: "text/plain", description: "the member's email address" },
    handler: async (ctx, { params }) =>
      text((await getMember(ctx.services, await ctx.membership(), params.username)).email),
  }),

  addToWorkspace("/api/w/:workspace/users/add", "addUser"),
  addToWorkspace("/api/w/:workspace/workspaces/add_user", "addUser (the former path)"),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/users/update/:username",
    summary: "updateUser",
    tag: "user",
    params: userParams,
    body: z.object({
      is_admin: z.boolean().nullish(),
      operator: z.boolean().nullish(),
      role: role.nullish(),
      disabled: z.boolean().nullish(),
    }),
    response: { contentType: "text/plain", description: "Updated <username>" },
    handler: async (ctx, { params, body }) => {
      const membership = await ctx.membership();
      const hasFlags = (body.is_admin ?? null) !== null || (body.operator ?? null) !== null;
      let newRole = body.role ?? undefined;
      if (newRole === undefined && hasFlags) {
        // A partial Windmill update: a flag left out keeps what the member has.
        const current = await getMember(ctx.services, membership, params.username);
        newRole = roleFromFlags(
          body.is_admin ?? current.role === "admin",
          body.operator ?? current.role === "operator",
        );
      }
      await updateMember(ctx.services, membership, params.username, {
        role: newRole,
        disabled: body.disabled ?? undefined,
      });
      return text(`Updated ${params.username}`);
    },
  }),

  defineRoute({
    method: "DELETE",
    pattern: "/api/w/:workspace/users/delete/:username",
    summary: "deleteUser",
    tag: "user",
    params: userParams,
    response: { contentType: "text/plain", description: "Removed <username> from the workspace" },
    handler: async (ctx, { params }) => {
      await removeMember(ctx.services, await ctx.membership(), params.username);
      return text(`Removed ${params.username} from the workspace`);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/users/is_owner/*path",
    summary: "isOwnerOfPath",
    tag: "user",
    params: z.object({ workspace: z.string(), path: z.string() }),
    response: z.boolean(),
    handler: async (ctx, { params }) =>
      json(await isOwnerOfPath(ctx.services, await ctx.membership(), params.path)),
  }),
];
