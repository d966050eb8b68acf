import { AppError, HTTP_STATUS } from "@millrace/core";

/** Windmill answers errors as plain text; the message names the field at fault. */
export function errorResponse(error: unknown): Response {
  if (error instanceof AppError) {
    return new Response(error.message, {
      status: HTTP_STATUS[error.code],
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

export const MAX_BODY_BYTES = 6 * 1024 * 1024;

/** Parses a JSON body, refusing oversized or malformed ones with a 4xx that says why. */
export async function readJson(request: Request): Promise<unknown> {
  const length = Number(request.headers.get("content-length") ?? 0);
  if (length > MAX_BODY_BYTES)
    throw new AppError("INVALID_INPUT", `body: larger than ${MAX_BODY_BYTES >> 20} MB`, "body");
  const raw = await request.text();
  if (raw.length > MAX_BODY_BYTES)
    throw new AppError("INVALID_INPUT", `body: larger than ${MAX_BODY_BYTES >> 20} MB`, "body");
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
