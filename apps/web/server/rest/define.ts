import { invalidInput } from "@millrace/core";
import { z } from "zod";
import { readJson } from "../http.ts";
import type { RestContext, Route } from "./router.ts";

/**
 * The declarative REST route: method, path, and zod schemas for its path parameters, query string,
 * body and answer, declared once. The router validates against them (a 400 naming the field at
 * fault), and `/api/openapi.json` is generated from them, so the document cannot drift from what
 * the handlers accept. Handlers receive parsed input and stay thin calls into `packages/core`.
 */
export interface RouteSpec<
  Params extends z.ZodType = z.ZodType,
  Query extends z.ZodType = z.ZodType,
  Body extends z.ZodType = z.ZodType,
> {
  method: Route["method"];
  /** `/api/w/:workspace/scripts/get/p/*path`: `:name` is one segment, `*name` the rest. */
  pattern: string;
  /** One line for the OpenAPI document (Windmill's operation name where there is one). */
  summary: string;
  /** The OpenAPI tag: the domain noun (script, job, variable, …). */
  tag: string;
  /** Who may call it: `public` routes need no credential (login, webhooks with their own secret…). */
  auth?: "user" | "public";
  /**
   * Answers without the database (no services are made for it, `ctx.services` is not set): what
   * must answer while PostgreSQL is away, such as /api/version. Public routes only.
   */
  offline?: true;
  params?: Params;
  query?: Query;
  /** A JSON body. Routes that read another body (text, tar) leave this out and read `ctx.request`. */
  body?: Body;
  /** The answer: a zod schema for a JSON answer, or the content type of another answer. */
  response?: z.ZodType | { contentType: string; description: string };
  handler: (
    ctx: RestContext,
    input: { params: z.output<Params>; query: z.output<Query>; body: z.output<Body> },
  ) => Promise<Response>;
}

export interface DeclaredRoute extends Route {
  spec: RouteSpec;
}

/** The field a zod issue is about, as the 400's message and `x-error-field` name it. */
function issueField(where: "query" | "body" | "path", issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join(".");
  if (where === "body") return path ? path : "body";
  return path || where;
}

/** zod's type names as the API's messages say them (`path: must be a string`). */
const EXPECTED: Record<string, string> = {
  string: "must be a string",
  number: "must be a number",
  int: "must be a whole number",
  boolean: "must be true or false",
  object: "must be a JSON object",
  record: "must be a JSON object",
  array: "must be a list",
};

function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type") {
    // zod's own wording ("Invalid input: expected …") is replaced; a schema's own message is kept.
    const generic = /^Invalid input: expected /.test(issue.message);
    if (/received undefined$/.test(issue.message)) return "is required";
    if (generic && EXPECTED[issue.expected]) return EXPECTED[issue.expected]!;
  }
  return issue.message.replace(/^Invalid input: /, "");
}

function parseOrRefuse<T extends z.ZodType>(
  schema: T,
  value: unknown,
  where: "query" | "body" | "path",
): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw invalidInput(issueField(where, issue), issueMessage(issue));
}

/** Whether a query field takes a list (`z.array`, possibly optional, defaulted or transformed). */
function takesList(schema: z.ZodType | undefined): boolean {
  let current: unknown = schema;
  for (let depth = 0; depth < 10 && current instanceof z.ZodType; depth++) {
    const def = (current as { def: { type: string; innerType?: unknown; in?: unknown; options?: unknown[] } })
      .def;
    if (def.type === "array") return true;
    if (def.type === "union") return (def.options ?? []).some((option) => takesList(option as z.ZodType));
    current = def.innerType ?? def.in;
  }
  return false;
}

/**
 * Query strings as an object. A name given twice becomes a list (`?tag=a&tag=b`) for a field that
 * takes one; any other field gets the first value, as `URLSearchParams.get` gave the hand-written
 * parsers before the table. An empty value (`?page=`) is no value, as those parsers took it.
 */
function queryObject(url: URL, schema: z.ZodType): Record<string, string | string[]> {
  const shape = schema instanceof z.ZodObject ? (schema.shape as Record<string, z.ZodType>) : null;
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    if (value === "") continue;
    const seen = query[name];
    if (seen === undefined) query[name] = value;
    else if (!shape || takesList(shape[name]))
      query[name] = Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return query;
}

export function defineRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  spec: RouteSpec<P, Q, B>,
): DeclaredRoute {
  return {
    method: spec.method,
    pattern: spec.pattern,
    ...(spec.offline && spec.auth === "public" ? { offline: true as const } : {}),
    spec: spec as unknown as RouteSpec,
    handler: async (ctx) => {
      let input: { params: unknown; query: unknown; body: unknown };
      try {
        input = {
          params: spec.params ? parseOrRefuse(spec.params, ctx.params, "path") : ctx.params,
          query: spec.query ? parseOrRefuse(spec.query, queryObject(ctx.url, spec.query), "query") : {},
          body: spec.body ? parseOrRefuse(spec.body, await readJson(ctx.request), "body") : undefined,
        };
      } catch (error) {
        // A caller without a valid credential learns that first (401), not what the input lacks.
        // Only on this error path: the handler asks for the caller once, with its membership.
        if (spec.auth !== "public") await ctx.principal();
        throw error;
      }
      return spec.handler(ctx, input as never);
    },
  };
}

/**
 * Query numbers arrive as text: a whole number (`1e3` too, as `Number` reads it), refused naming
 * the field otherwise, and one past 2^53 (`1e308`) as out of range.
 */
export const queryInt = z.string().transform((raw, ctx) => {
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isInteger(value)) {
    ctx.issues.push({ code: "custom", message: "must be a whole number", input: raw });
    return z.NEVER;
  }
  if (!Number.isSafeInteger(value)) {
    ctx.issues.push({ code: "custom", message: "is out of range", input: raw });
    return z.NEVER;
  }
  return value;
});

/** `true`/`false` in a query string, as Windmill's clients send them. */
export const queryBool = z
  .enum(["true", "false"], { error: "must be true or false" })
  .transform((value) => value === "true");
