import type { User } from "@millrace/db";
import { recordAudit } from "../audit/index.ts";
import type { Principal } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { requireSuperadmin } from "../instance-admin.ts";
import { createUser } from "../users.ts";

export interface UserView {
  id: string;
  email: string;
  username: string;
  name: string | null;
  isSuperAdmin: boolean;
  disabled: boolean;
  createdAt: Date;
}

export function userView(user: User): UserView {
  return {
    id: user.id,
    email: user.email,
    username: user.username,
    name: user.name,
    isSuperAdmin: user.isSuperAdmin,
    disabled: user.disabled,
    createdAt: user.createdAt,
  };
}

export interface CreateAccountInput {
  email: string;
  password: string;
  name?: string | null;
  superAdmin?: boolean;
}

/** Creates an account on the instance (Windmill's users/create): superadmins only. */
export async function createAccount(
  ctx: CoreContext,
  principal: Principal,
  input: CreateAccountInput,
): Promise<UserView> {
  requireSuperadmin(principal, "create users");
  const user = await createUser(ctx, input);
  await recordAudit(ctx.pool, principal, {
    workspaceId: null,
    operation: "users.add_global",
    resource: user.username,
    parameters: { email: user.email, super_admin: user.isSuperAdmin },
  });
  return userView(user);
}

export async function listAccounts(ctx: CoreContext, principal: Principal): Promise<UserView[]> {
  requireSuperadmin(principal, "list every user");
  const users = await ctx.db.user.findMany({ orderBy: { email: "asc" } });
  return users.map(userView);
}

export interface UpdateAccountInput {
  isSuperAdmin?: boolean;
  disabled?: boolean;
  name?: string | null;
}

/**
 * Changes an account instance-wide. Disabling an account stops its sessions and tokens at once
 * (both are checked against the user row on every request).
 */
export async function updateAccount(
  ctx: CoreContext,
  principal: Principal,
  email: string,
  input: UpdateAccountInput,
): Promise<UserView> {
  requireSuperadmin(principal, "change users");
  const user = await ctx.db.user.findFirst({
    where: { OR: [{ email: email.trim().toLowerCase() }, { username: email }] },
  });
  if (!user) throw notFound(`user ${email}`);
  if (user.id === principal.userId && (input.disabled === true || input.isSuperAdmin === false)) {
    throw new AppError("CONFLICT", "you may not disable yourself or drop your own superadmin role");
  }
  if (input.name !== undefined && input.name !== null && input.name.length > 100) {
    throw invalidInput("name", "at most 100 characters");
  }
  const updated = await ctx.db.user.update({
    where: { id: user.id },
    data: {
      ...(input.isSuperAdmin !== undefined ? { isSuperAdmin: input.isSuperAdmin } : {}),
      ...(input.disabled !== undefined ? { disabled: input.disabled } : {}),
      ...(input.name !== undefined ? { name: input.name } : {}),
    },
  });
  await recordAudit(ctx.pool, principal, {
    workspaceId: null,
    operation: "users.update",
    resource: updated.username,
    parameters: { is_super_admin: input.isSuperAdmin, disabled: input.disabled },
  });
  return userView(updated);
}

/** The caller's own account (Windmill's global whoami). */
export async function getAccount(ctx: CoreContext, principal: Principal): Promise<UserView | null> {
  const user = await ctx.db.user.findUnique({ where: { id: principal.userId } });
  return user ? userView(user) : null;
}

/**
 * Deletes an account from the instance (Windmill's `users/delete/{email}`, `wmill user remove`):
 * superadmins only, never their own. Its memberships, tokens, group memberships and drafts go
 * with it (cascades), and its folder grants (`u/<username>`) in every workspace. What it deployed
 * or ran stays, under its username.
 */
export async function deleteAccount(
  ctx: CoreContext,
  principal: Principal,
  email: string,
): Promise<UserView> {
  requireSuperadmin(principal, "delete users");
  const user = await ctx.db.user.findFirst({
    where: { OR: [{ email: email.trim().toLowerCase() }, { username: email }] },
  });
  if (!user) throw notFound(`user ${email}`);
  if (user.id === principal.userId) throw new AppError("CONFLICT", "you may not delete your own account");
  await ctx.db.$transaction([
    ctx.db.folderPermission.deleteMany({ where: { principal: `u/${user.username}` } }),
    ctx.db.user.delete({ where: { id: user.id } }),
  ]);
  await recordAudit(ctx.pool, principal, {
    workspaceId: null,
    operation: "users.delete_global",
    resource: user.username,
    parameters: { email: user.email },
  });
  return userView(user);
}
