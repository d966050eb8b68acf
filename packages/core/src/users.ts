import { isUniqueViolation, type User } from "@millrace/db";
import { hashPassword, verifyPassword } from "./auth/password.ts";
import type { Principal } from "./auth/principal.ts";
import type { CoreContext } from "./context.ts";
import { AppError, invalidInput } from "./errors.ts";

const EMAIL = /^[^\s@]+@[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 8;

export function principalOf(user: Pick<User, "id" | "email" | "username" | "isSuperAdmin">): Principal {
  return { userId: user.id, email: user.email, username: user.username, isSuperAdmin: user.isSuperAdmin };
}

/** `jane.doe+x@corp.com` -> `jane_doe_x`: the `<user>` in `u/<user>/…` paths. */
function usernameBase(email: string): string {
  const local = email.split("@")[0] ?? "user";
  const cleaned = local
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "");
  return cleaned.slice(0, 40) || "user";
}

export interface CreateUserInput {
  email: string;
  password: string;
  name?: string | null;
  superAdmin?: boolean;
  username?: string;
}

export async function createUser(ctx: CoreContext, input: CreateUserInput): Promise<User> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email)) throw invalidInput("email", "not a valid email address");
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw invalidInput("password", `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  const passwordHash = await hashPassword(input.password);
  const base = input.username ?? usernameBase(email);
  if (!/^[a-z0-9_]{1,50}$/.test(base)) throw invalidInput("username", "use a-z, 0-9 and _ only");
  // Usernames must be unique; on a clash with another email, try base2, base3, …
  for (let attempt = 1; attempt <= 20; attempt++) {
    const username = attempt === 1 ? base : `${base}${attempt}`;
    try {
      return await ctx.db.user.create({
        data: { email, username, passwordHash, name: input.name ?? null, isSuperAdmin: !!input.superAdmin },
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      if (await ctx.db.user.findUnique({ where: { email } })) {
        throw new AppError("CONFLICT", `a user with email ${email} already exists`, "email");
      }
      if (input.username) throw new AppError("CONFLICT", `username ${username} is taken`, "username");
    }
  }
  throw new AppError("CONFLICT", "could not find a free username", "username");
}

/** Checks an email and password; the same error whether the user is unknown, disabled or wrong. */
export async function authenticate(ctx: CoreContext, email: string, password: string): Promise<User> {
  const user = await ctx.db.user.findUnique({ where: { email: email.trim().toLowerCase() } });
  const ok = await verifyPassword(user?.passwordHash ?? null, password);
  if (!user || !ok || user.disabled) throw new AppError("UNAUTHORIZED", "invalid email or password");
  return user;
}

export async function getUserPrincipal(ctx: CoreContext, userId: string): Promise<Principal | null> {
  const user = await ctx.db.user.findUnique({ where: { id: userId } });
  return user && !user.disabled ? principalOf(user) : null;
}

/**
 * Creates the first superadmin when the instance has no user yet. Safe when several servers boot
 * together: the unique email makes the losers no-ops.
 */
export async function ensureFirstSuperadmin(
  ctx: CoreContext,
  input: { email: string; password: string },
): Promise<{ created: boolean }> {
  if ((await ctx.db.user.count()) > 0) return { created: false };
  try {
    await createUser(ctx, { email: input.email, password: input.password, superAdmin: true, name: "Admin" });
    return { created: true };
  } catch (error) {
    if (error instanceof AppError && error.code === "CONFLICT") return { created: false };
    throw error;
  }
}
