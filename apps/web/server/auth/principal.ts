import { getServerSession } from "next-auth";
import {
  AppError,
  assertCallAllowed,
  getUserPrincipal,
  membershipFromBearer,
  principalFromBearer,
  requireMembership,
  type Membership,
  type Principal,
} from "@millrace/core";
import { getServices } from "../services.ts";
import { requestIp } from "./ip.ts";
import { getAuthOptions } from "./options.ts";

function bearerToken(headers: Headers): string | null {
  const header = headers.get("authorization");
  if (header?.toLowerCase().startsWith("bearer ")) return header.slice(7).trim() || null;
  return null;
}

function tokenCookie(headers: Headers): string | null {
  // Windmill's login sets a `token` cookie that clients send back; accept it like a bearer token.
  const cookie = headers.get("cookie") ?? "";
  const match = /(?:^|;\s*)token=([^;]+)/.exec(cookie);
  return match?.[1] ? decodeURIComponent(match[1]) : null;
}

export { requestIp } from "./ip.ts";

/** The API token a request carries (bearer header, `?token=`, or Windmill's `token` cookie), if any. */
export function requestToken(headers: Headers, url: URL): string | null {
  return bearerToken(headers) ?? url.searchParams.get("token") ?? tokenCookie(headers);
}

/**
 * What every principal of a request goes through: a webhook token runs its one script and calls
 * nothing else, REST or tRPC; the caller's IP goes with it (audit entries).
 */
function vetFor(request: Request, url: URL): (principal: Principal) => Principal {
  const ip = requestIp(request.headers);
  return (principal) => {
    assertCallAllowed(principal, request.method, url.pathname);
    return ip ? { ...principal, ip } : principal;
  };
}

/**
 * Resolves the caller of a request: a bearer token (API token, `?token=` for webhooks), the
 * `token` cookie, or a next-auth session. Returns null when the request carries none.
 */
export async function principalFromRequest(request: Request): Promise<Principal | null> {
  const services = await getServices();
  const url = new URL(request.url);
  const token = requestToken(request.headers, url);
  if (token)
    return vetFor(request, url)(await principalFromBearer(services, token, services.superadminSecret));
  const session = (await getServerSession(await getAuthOptions())) as { userId?: string } | null;
  if (!session?.userId) return null;
  const ip = requestIp(request.headers);
  const principal = await getUserPrincipal(services, session.userId);
  return principal && ip ? { ...principal, ip } : principal;
}

export async function requirePrincipal(request: Request): Promise<Principal> {
  const principal = await principalFromRequest(request);
  if (!principal) throw new AppError("UNAUTHORIZED", "sign in or send Authorization: Bearer <token>");
  return principal;
}

/**
 * The caller's membership in `workspaceId` (with its principal). A request with a token resolves
 * both in one query; anything else resolves the principal first.
 */
export async function requireMembershipOfRequest(request: Request, workspaceId: string): Promise<Membership> {
  const url = new URL(request.url);
  const token = requestToken(request.headers, url);
  const services = await getServices();
  if (!token) return requireMembership(services, await requirePrincipal(request), workspaceId);
  return membershipFromBearer(services, token, services.superadminSecret, workspaceId, vetFor(request, url));
}
