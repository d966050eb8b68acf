/**
 * The caller's address, for the audit log and sign-in rate limits: the last X-Forwarded-For hop,
 * which is the one the proxy in front appended (nginx's $proxy_add_x_forwarded_for; Next sets the
 * socket's address when no proxy did). Earlier hops come from the client and prove nothing.
 */
export function requestIp(headers: Headers): string | null {
  return lastHop(headers.get("x-forwarded-for")) ?? (headers.get("x-real-ip")?.trim() || null);
}

export function lastHop(forwardedFor: string | null | undefined): string | null {
  return forwardedFor?.split(",").at(-1)?.trim() || null;
}
