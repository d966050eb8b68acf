import {
  checkQueryInput,
  checkTextInput,
  invalidInput,
  millraceMetrics,
  requireMembership,
  statusClass,
  type Membership,
  type Principal,
} from "@millrace/core";
import { requireMembershipOfRequest, requirePrincipal } from "../auth/principal.ts";
import { errorResponse, text } from "../http.ts";
import { getServices, type Services } from "../services.ts";

export interface RestContext {
  request: Request;
  url: URL;
  params: Record<string, string>;
  services: Services;
  /** The authenticated caller (401 when the request carries no valid credential). */
  principal(): Promise<Principal>;
  /** The caller's membership in the `{workspace}` of the path (404 for non-members). */
  membership(): Promise<Membership>;
}

export type RestHandler = (ctx: RestContext) => Promise<Response>;

export interface Route {
  method: "GET" | "POST" | "DELETE";
  pattern: string;
  /** Served without the database (RouteSpec.offline). */
  offline?: true;
  handler: RestHandler;
}

interface CompiledRoute extends Route {
  regex: RegExp;
  names: string[];
}

/** `/api/w/:workspace/scripts/get/p/*path`: `:name` is one segment, `*name` the rest (slashes included). */
function compile(route: Route): CompiledRoute {
  const names: string[] = [];
  const source = route.pattern
    .split("/")
    .map((segment) => {
      if (segment.startsWith(":")) {
        names.push(segment.slice(1));
        return "([^/]+)";
      }
      if (segment.startsWith("*")) {
        names.push(segment.slice(1));
        return "(.+)";
      }
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return { ...route, regex: new RegExp(`^${source}/?$`), names };
}

/**
 * The route's path parameters, decoded. Malformed percent-encoding, and what the database cannot
 * hold (NUL, which `%00` decodes to), are refused here, naming the parameter, for every route.
 */
function pathParams(route: CompiledRoute, match: RegExpExecArray): Record<string, string> {
  const params: Record<string, string> = {};
  route.names.forEach((name, i) => {
    let value: string;
    try {
      value = decodeURIComponent(match[i + 1] ?? "");
    } catch {
      throw invalidInput(name, "malformed percent-encoding in the URL");
    }
    checkTextInput(name, value);
    params[name] = value;
  });
  return params;
}

export function createRestRouter(routes: Route[]): (request: Request) => Promise<Response> {
  const compiled = routes.map(compile);
  return async (request) => {
    const url = new URL(request.url);
    const started = performance.now();
    const response = await routeRequest(request, url);
    millraceMetrics().httpRequestDuration.observe(
      { route: response.route, method: request.method, status: statusClass(response.answer.status) },
      (performance.now() - started) / 1000,
    );
    return response.answer;
  };

  async function routeRequest(request: Request, url: URL): Promise<{ route: string; answer: Response }> {
    let pathMatched = false;
    for (const route of compiled) {
      const match = route.regex.exec(url.pathname);
      if (!match) continue;
      pathMatched = true;
      if (route.method !== request.method) continue;
      try {
        const params = pathParams(route, match);
        checkQueryInput(url.searchParams);
        // An offline route never touches services: it must answer while the database is away.
        const services = route.offline ? (undefined as unknown as Services) : await getServices();
        let principal: Promise<Principal> | undefined;
        let membership: Promise<Membership> | undefined;
        const ctx: RestContext = {
          request,
          url,
          params,
          services,
          principal: () => (principal ??= requirePrincipal(request)),
          // One query for both when the principal was not needed before (most workspace calls).
          membership: () =>
            (membership ??= principal
              ? principal.then((who) => requireMembership(services, who, params.workspace ?? ""))
              : requireMembershipOfRequest(request, params.workspace ?? "").then((found) => {
                  principal ??= Promise.resolve(found.principal);
                  return found;
                })),
        };
        return { route: route.pattern, answer: await route.handler(ctx) };
      } catch (error) {
        return {
          route: route.pattern,
          answer: errorResponse(error, { route: `${route.method} ${route.pattern}` }),
        };
      }
    }
    // One label for every unknown path: a scanner must not grow the label set.
    return {
      route: "unmatched",
      answer: text(
        pathMatched ? "method not allowed" : `no route for ${url.pathname}`,
        pathMatched ? 405 : 404,
      ),
    };
  }
}
