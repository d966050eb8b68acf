import { AppError, HTTP_STATUS } from "@millrace/core";
import { serverEnv } from "./env.ts";

/** Windmill answers errors as plain text; the message names the field at fault. */
export function errorResponse(error: unknown): Response {
  if (error instanceof AppError) {
    return new Response(error.message, {
      status: error instanceof PayloadTooLargeError ? 413 : HTTP_STATUS[error.code],
      headers: {
        "content-type": "text/plain; charset=utf-8",
        ...(error.field ? { "x-error-field": error.field } : {}),
      },
    });
  }
  console.error(error);
  return new Response("internal server error", { status: 500, headers: { "content-type": "text/plain" } });
}

export function text(body: string, status = 200): Response {
  return new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
}

export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body ?? null), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/** An input error answered with 413: the body is refused before it is parsed. */
export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super("INVALID_INPUT", `body: payload too large (more than ${limitBytes >> 20} MB)`, "body");
  }
}

/**
 * Reads a request body as text, at most REQUEST_BODY_LIMIT_MB: a larger body is refused from its
 * Content-Length, or as soon as the bytes read pass the limit, never buffered whole.
 */
export async function readText(request: Request): Promise<string> {
  const limit = serverEnv().REQUEST_BODY_LIMIT_MB * 1024 * 1024;
  if (Number(request.headers.get("content-length") ?? 0) > limit) throw new PayloadTooLargeError(limit);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new PayloadTooLargeError(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Parses a JSON body, refusing oversized or malformed ones with a 4xx that says why. */
export async function readJson(request: Request): Promise<unknown> {
  const raw = await readText(request);
  if (!raw.trim()) return {};
  try {
    return JSON.parse(raw);
  } catch {
    throw new AppError("INVALID_INPUT", "body: not valid JSON", "body");
  }
}

export function readObject(value: unknown, field = "body"): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AppError("INVALID_INPUT", `${field}: must be a JSON object`, field);
  }
  return value as Record<string, unknown>;
}
