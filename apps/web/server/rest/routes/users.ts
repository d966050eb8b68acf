import {
  addMember,
  createAccount,
  deleteToken,
  getAccount,
  getMember,
  invalidInput,
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
import { json, readJson, readObject, text } from "../../http.ts";
import type { RestContext, Route } from "../router.ts";
import { intParam, optionalString, requiredString } from "./params.ts";

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

function optionalBoolean(body: Record<string, unknown>, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw invalidInput(field, "must be true or false");
  return value;
}

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

async function addToWorkspace(ctx: RestContext): Promise<Response> {
  const body = readObject(await readJson(ctx.request));
  const added = await addMember(ctx.services, await ctx.membership(), {
    email: requiredString(body, "email"),
    role: body.role !== undefined ? (body.role as never) : roleFromFlags(body.is_admin, body.operator),
  });
  return text(`Added ${added.email} to the workspace as ${added.role}`, 201);
}

export const userRoutes: Route[] = [
  {
    method: "GET",
    pattern: "/api/users/whoami",
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
  },

  {
    method: "GET",
    pattern: "/api/users/list_as_super_admin",
    handler: async (ctx) => {
      const users = await listAccounts(ctx.services, await ctx.principal());
      const perPage = Math.min(intParam(ctx, "per_page") ?? 1000, 1000);
      const page = Math.max(intParam(ctx, "page") ?? 1, 1);
      const activeOnly = ctx.url.searchParams.get("active_only") === "true";
      return json(
        users
          .filter((u) => !activeOnly || !u.disabled)
          .slice((page - 1) * perPage, page * perPage)
          .map(globalUserInfo),
      );
    },
  },

  {
    method: "GET",
    pattern: "/api/users/list",
    handler: async (ctx) =>
      json((await listAccounts(ctx.services, await ctx.principal())).map(globalUserInfo)),
  },

  {
    method: "POST",
    pattern: "/api/users/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const user = await createAccount(ctx.services, await ctx.principal(), {
        email: requiredString(body, "email"),
        password: requiredString(body, "password"),
        name: optionalString(body, "name") ?? null,
        superAdmin: optionalBoolean(body, "super_admin") ?? false,
      });
      return text(`Created user ${user.email} (${user.username})`, 201);
    },
  },

  {
    method: "POST",
    pattern: "/api/users/update/:email",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const user = await updateAccount(ctx.services, await ctx.principal(), ctx.params.email ?? "", {
        isSuperAdmin: optionalBoolean(body, "is_super_admin"),
        disabled: optionalBoolean(body, "disabled"),
        name: optionalString(body, "name"),
      });
      return text(`Updated user ${user.email}`);
    },
  },

  {
    method: "GET",
    pattern: "/api/users/tokens/list",
    handler: async (ctx) => {
      const tokens = await listTokens(ctx.services, await ctx.principal(), {
        excludeEphemeral: ctx.url.searchParams.get("exclude_ephemeral") === "true",
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
  },

  {
    method: "DELETE",
    pattern: "/api/users/tokens/delete/:token_prefix",
    handler: async (ctx) => {
      await deleteToken(ctx.services, await ctx.principal(), ctx.params.token_prefix ?? "");
      return text("Deleted token");
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/users/whoami",
    handler: async (ctx) => json(await whoami(ctx, await ctx.membership(), await ctx.principal())),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/users/list",
    handler: async (ctx) => json((await listMembers(ctx.services, await ctx.membership())).map(windmillUser)),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/users/list_usernames",
    handler: async (ctx) =>
      json((await listMembers(ctx.services, await ctx.membership())).map((m) => m.username)),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/users/get/:username",
    handler: async (ctx) =>
      json(windmillUser(await getMember(ctx.services, await ctx.membership(), ctx.params.username ?? ""))),
  },

  { method: "POST", pattern: "/api/w/:workspace/users/add", handler: addToWorkspace },
  { method: "POST", pattern: "/api/w/:workspace/workspaces/add_user", handler: addToWorkspace },

  {
    method: "POST",
    pattern: "/api/w/:workspace/users/update/:username",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const membership = await ctx.membership();
      const username = ctx.params.username ?? "";
      const hasRole = body.is_admin !== undefined || body.operator !== undefined;
      let role = body.role === undefined ? undefined : (body.role as never);
      if (role === undefined && hasRole) {
        // A partial Windmill update: a flag left out keeps what the member has.
        const current = await getMember(ctx.services, membership, username);
        role = roleFromFlags(
          body.is_admin ?? current.role === "admin",
          body.operator ?? current.role === "operator",
        ) as never;
      }
      await updateMember(ctx.services, membership, username, {
        role,
        disabled: optionalBoolean(body, "disabled"),
      });
      return text(`Updated ${username}`);
    },
  },

  {
    method: "DELETE",
    pattern: "/api/w/:workspace/users/delete/:username",
    handler: async (ctx) => {
      await removeMember(ctx.services, await ctx.membership(), ctx.params.username ?? "");
      return text(`Removed ${ctx.params.username} from the workspace`);
    },
  },
];
