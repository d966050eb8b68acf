import { z } from "zod";
import type { DeclaredRoute } from "./define.ts";
import type { Route } from "./router.ts";
import { MILLRACE_VERSION } from "./routes/params.ts";

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  return rest;
}

/** `/api/w/:workspace/scripts/get/p/*path` → `/w/{workspace}/scripts/get/p/{path}` (servers add `/api`). */
export function openApiPath(pattern: string): string {
  return pattern.replace(/^\/api/, "").replace(/[:*]([A-Za-z_]+)/g, "{$1}");
}

function parameters(route: DeclaredRoute): JsonSchema[] {
  const list: JsonSchema[] = [];
  const pathNames = [...route.pattern.matchAll(/[:*]([A-Za-z_]+)/g)].map((m) => m[1]!);
  const pathSchema = route.spec.params ? (jsonSchema(route.spec.params, "input") as JsonSchema) : null;
  const pathProps = (pathSchema?.properties ?? {}) as Record<string, JsonSchema>;
  for (const name of pathNames) {
    list.push({ name, in: "path", required: true, schema: pathProps[name] ?? { type: "string" } });
  }
  if (route.spec.query) {
    const query = jsonSchema(route.spec.query, "input");
    const required = new Set((query.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((query.properties ?? {}) as Record<string, JsonSchema>)) {
      list.push({ name, in: "query", required: required.has(name), schema });
    }
  }
  return list;
}

function operation(route: Route): JsonSchema {
  const declared = "spec" in route ? (route as DeclaredRoute) : null;
  if (!declared) {
    return { summary: "(not yet declared with schemas)", responses: { default: { description: "answer" } } };
  }
  const { spec } = declared;
  const op: JsonSchema = {
    operationId: `${spec.method.toLowerCase()}${openApiPath(spec.pattern).replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase())}`,
    summary: spec.summary,
    tags: [spec.tag],
    parameters: parameters(declared),
  };
  if (spec.auth === "public") op.security = [];
  if (spec.body) {
    op.requestBody = {
      required: true,
      content: { "application/json": { schema: jsonSchema(spec.body, "input") } },
    };
  }
  const response = spec.response;
  op.responses = {
    "2XX": !response
      ? { description: "done" }
      : response instanceof z.ZodType
        ? {
            description: "the answer",
            content: { "application/json": { schema: jsonSchema(response, "output") } },
          }
        : { description: response.description, content: { [response.contentType]: { schema: {} } } },
    "4XX": {
      description: "refused: the message names the field at fault (also in `x-error-field`)",
      content: { "text/plain": { schema: { type: "string" } } },
    },
  };
  return op;
}

/** The OpenAPI 3.1 document of every REST route, generated from the route table. */
export function openApiDocument(routes: readonly Route[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = openApiPath(route.pattern);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Millrace API",
      version: MILLRACE_VERSION,
      description:
        "Windmill-compatible REST API of Millrace. Authenticate with `Authorization: Bearer <token>`.",
    },
    servers: [{ url: "/api" }],
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths,
  };
}
