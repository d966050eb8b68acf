import { z } from "zod";
import {
  addGroupMember,
  addMember,
  createAccount,
  createFolder,
  createGroup,
  createToken,
  deleteFolder,
  deleteGroup,
  deleteToken,
  listAccounts,
  listFolders,
  listGroups,
  listMembers,
  listTokens,
  removeGroupMember,
  removeMember,
  setFolderPermission,
  updateAccount,
  updateFolder,
  updateMember,
  type FolderView,
  type MemberView,
  type UserView,
} from "@millrace/core";
import { authedProcedure, router, workspaceProcedure } from "../init.ts";

const role = z.enum(["admin", "developer", "operator"]);
const level = z.enum(["owner", "writer", "viewer"]);

function memberView(m: MemberView) {
  return { ...m, createdAt: m.createdAt.toISOString() };
}

function folderView(f: FolderView) {
  return { ...f, createdAt: f.createdAt.toISOString() };
}

function accountView(u: UserView) {
  return { ...u, createdAt: u.createdAt.toISOString() };
}

/** Members, groups and folders of a workspace; the caller's tokens; accounts (superadmins). */
export const peopleRouter = router({
  members: workspaceProcedure.query(async ({ ctx }) =>
    (await listMembers(ctx.services, ctx.membership)).map(memberView),
  ),
  addMember: workspaceProcedure
    .input(z.object({ email: z.string(), role }))
    .mutation(({ ctx, input }) => addMember(ctx.services, ctx.membership, input)),
  updateMember: workspaceProcedure
    .input(z.object({ username: z.string(), role: role.optional(), disabled: z.boolean().optional() }))
    .mutation(async ({ ctx, input }) => {
      await updateMember(ctx.services, ctx.membership, input.username, {
        role: input.role,
        disabled: input.disabled,
      });
      return { ok: true };
    }),
  removeMember: workspaceProcedure
    .input(z.object({ username: z.string() }))
    .mutation(async ({ ctx, input }) => {
      await removeMember(ctx.services, ctx.membership, input.username);
      return { ok: true };
    }),

  groups: workspaceProcedure.query(({ ctx }) => listGroups(ctx.services, ctx.membership)),
  createGroup: workspaceProcedure
    .input(z.object({ name: z.string(), summary: z.string().nullable().default(null) }))
    .mutation(({ ctx, input }) => createGroup(ctx.services, ctx.membership, input)),
  deleteGroup: workspaceProcedure.input(z.object({ name: z.string() })).mutation(async ({ ctx, input }) => {
    await deleteGroup(ctx.services, ctx.membership, input.name);
    return { ok: true };
  }),
  addGroupMember: workspaceProcedure
    .input(z.object({ name: z.string(), username: z.string() }))
    .mutation(async ({ ctx, input }) => {
      await addGroupMember(ctx.services, ctx.membership, input.name, input.username);
      return { ok: true };
    }),
  removeGroupMember: workspaceProcedure
    .input(z.object({ name: z.string(), username: z.string() }))
    .mutation(async ({ ctx, input }) => {
      await removeGroupMember(ctx.services, ctx.membership, input.name, input.username);
      return { ok: true };
    }),

  folders: workspaceProcedure.query(async ({ ctx }) =>
    (await listFolders(ctx.services, ctx.membership)).map(folderView),
  ),
  createFolder: workspaceProcedure
    .input(z.object({ name: z.string(), summary: z.string().nullable().default(null) }))
    .mutation(async ({ ctx, input }) => folderView(await createFolder(ctx.services, ctx.membership, input))),
  updateFolder: workspaceProcedure
    .input(z.object({ name: z.string(), summary: z.string().nullable() }))
    .mutation(async ({ ctx, input }) =>
      folderView(await updateFolder(ctx.services, ctx.membership, input.name, { summary: input.summary })),
    ),
  setFolderPermission: workspaceProcedure
    .input(z.object({ name: z.string(), principal: z.string(), level: level.nullable() }))
    .mutation(async ({ ctx, input }) =>
      folderView(
        await setFolderPermission(ctx.services, ctx.membership, input.name, input.principal, input.level),
      ),
    ),
  deleteFolder: workspaceProcedure.input(z.object({ name: z.string() })).mutation(async ({ ctx, input }) => {
    await deleteFolder(ctx.services, ctx.membership, input.name);
    return { ok: true };
  }),

  /** API tokens; sign-in sessions too when asked (every sign-in makes one). */
  tokens: authedProcedure
    .input(z.object({ includeSessions: z.boolean().default(false) }).default({ includeSessions: false }))
    .query(async ({ ctx, input }) =>
      (await listTokens(ctx.services, ctx.principal, { excludeEphemeral: !input.includeSessions })).map(
        (t) => ({
          ...t,
          expiresAt: t.expiresAt?.toISOString() ?? null,
          lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
          createdAt: t.createdAt.toISOString(),
        }),
      ),
    ),
  createToken: authedProcedure
    .input(
      z.object({
        label: z.string().max(200).nullable().default(null),
        expiresAt: z.string().nullable().default(null),
        workspaceId: z.string().nullable().default(null),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
      const token = await createToken(ctx.services, ctx.principal, {
        label: input.label,
        expiresAt: expiresAt && !Number.isNaN(expiresAt.getTime()) ? expiresAt : null,
        workspaceId: input.workspaceId || null,
      });
      return { token };
    }),
  deleteToken: authedProcedure
    .input(z.object({ tokenPrefix: z.string() }))
    .mutation(async ({ ctx, input }) => {
      await deleteToken(ctx.services, ctx.principal, input.tokenPrefix);
      return { ok: true };
    }),

  accounts: authedProcedure.query(async ({ ctx }) =>
    (await listAccounts(ctx.services, ctx.principal)).map(accountView),
  ),
  createAccount: authedProcedure
    .input(
      z.object({
        email: z.string(),
        password: z.string(),
        name: z.string().nullable().default(null),
        superAdmin: z.boolean().default(false),
      }),
    )
    .mutation(async ({ ctx, input }) => accountView(await createAccount(ctx.services, ctx.principal, input))),
  updateAccount: authedProcedure
    .input(
      z.object({ email: z.string(), isSuperAdmin: z.boolean().optional(), disabled: z.boolean().optional() }),
    )
    .mutation(async ({ ctx, input }) =>
      accountView(
        await updateAccount(ctx.services, ctx.principal, input.email, {
          isSuperAdmin: input.isSuperAdmin,
          disabled: input.disabled,
        }),
      ),
    ),
});
