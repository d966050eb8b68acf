import { randomBytes } from "node:crypto";
import {
  AppError,
  checkJsonInput,
  HTTP_STATUS,
  READY_RETRY_AFTER_SECS,
  SecretKeyError,
} from "@millrace/core";
import { isDatabaseUnavailable } from "@millrace/db";
import { serverEnv } from "./env.ts";

/** Where an error happened, for its log line: never a value the request carried. */
export interface ErrorSite {
  /** The route's pattern (`POST /api/w/:workspace/variables/create`, `trpc variable.create`). */
  route: string;
}

/**
 * A missing or wrong MILLRACE_SECRET_KEY (the operator's configuration, not the caller's input).
 * By name too: Next's bundles may hold a second copy of the class.
 */
export function isSecretKeyError(error: unknown): error is Error {
  return error instanceof SecretKeyError || (error instanceof Error && error.name === "SecretKeyError");
}

/** Logs a secret key problem as one line: its message names the variable, never a value. */
export function logSecretKeyError(error: Error): void {
  console.error(`secrets: ${error.message}`);
}

const SAFE_CODE = /^[A-Za-z0-9_]{1,32}$/;

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  // `name` survives minification; pg's DatabaseError names itself "error", its class does not.
  const generic = !error.name || error.name === "Error" || error.name === "error";
  const name = (generic ? error.constructor?.name : error.name) || "Error";
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && SAFE_CODE.test(code) ? `${name} [${code}]` : name;
}

/**
 * The stack's frames, without its first line, which repeats the message. Frames only name our
 * code's files and functions; when the stack does not start with the message as V8 wrote it (a
 * message changed after the fact), no frame is kept rather than risk keeping part of a message.
 */
function stackFrames(error: Error): string[] {
  const stack = typeof error.stack === "string" ? error.stack : "";
  const head = `${error.name}: ${error.message}`;
  const rest = error.message ? (stack.startsWith(head) ? stack.slice(head.length) : "") : stack;
  return rest
    .split("\n")
    .filter((line) => /^ {4}at \S/.test(line))
    .slice(0, 12);
}

/**
 * Logs an unexpected error. Error messages quote what the request carried (PostgreSQL's detail,
 * Prisma's dump of the failed call, a thrown value), so the log line holds only the error's class
 * and code, those of its causes, the route's pattern, a request id the answer repeats, and the
 * stack frames: never a message, a body, an argument, a path or query value. Returns the id.
 */
export function logInternalError(error: unknown, site: ErrorSite): string {
  const requestId = randomBytes(6).toString("hex");
  const causes: string[] = [];
  for (let cause = error instanceof Error ? error.cause : undefined; cause && causes.length < 3;) {
    causes.push(describeError(cause));
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  const frames = error instanceof Error ? stackFrames(error) : [];
  console.error(
    `internal error on ${site.route} (request ${requestId}): ${describeError(error)}` +
      (causes.length ? `, caused by ${causes.join(", caused by ")}` : "") +
      (frames.length ? `\n${frames.join("\n")}` : ""),
  );
  return requestId;
}

/** What a caller is told while the database cannot serve (errors.ts isDatabaseUnavailable). */
export const DATABASE_UNAVAILABLE_MESSAGE =
  "the database is unavailable (unreachable, restarting, read-only or out of connections): retry in a few seconds";
/** Seconds a client should wait before retrying (the answer's Retry-After), as /api/ready says. */
export const DATABASE_RETRY_AFTER_SECS = READY_RETRY_AFTER_SECS;

let unavailableSince = 0;
let unavailableCount = 0;

/**
 * Whether `error` is the database being away; if so it is noted in the log, at most one line per
 * 10 s with the count of requests refused meanwhile (an outage refuses many at once).
 */
export function noteDatabaseUnavailable(error: unknown, site: ErrorSite): boolean {
  if (!isDatabaseUnavailable(error)) return false;
  unavailableCount++;
  const now = Date.now();
  if (now - unavailableSince >= 10_000) {
    console.error(
      `database unavailable on ${site.route}: ${describeError(error)}; ${unavailableCount} request(s) answered 503 since the last note`,
    );
    unavailableSince = now;
    unavailableCount = 0;
  }
  return true;
}

/** Windmill answers errors as plain text; the message names the field at fault. */
export function errorResponse(error: unknown, site: ErrorSite): Response {
  if (error instanceof AppError) {
    return new Response(error.message, {
      status: error instanceof PayloadTooLargeError ? 413 : HTTP_STATUS[error.code],
      headers: {
        "content-type": "text/plain; charset=utf-8",
        ...(error.field ? { "x-error-field": error.field } : {}),
      },
    });
  }
  if (isSecretKeyError(error)) {
    logSecretKeyError(error);
    return new Response(error.message, {
      status: 503,
      headers: { "content-type": "text/plain; charset=utf-8", "x-error-field": "MILLRACE_SECRET_KEY" },
    });
  }
  if (noteDatabaseUnavailable(error, site)) {
    return new Response(DATABASE_UNAVAILABLE_MESSAGE, {
      status: 503,
      headers: {
        "content-type": "text/plain; charset=utf-8",
        "retry-after": String(DATABASE_RETRY_AFTER_SECS),
      },
    });
  }
  const requestId = logInternalError(error, site);
  return new Response(`internal server error (request ${requestId})`, {
    status: 500,
    headers: { "content-type": "text/plain; charset=utf-8", "x-request-id": requestId },
  });
}

// The bodies of the responses made by `text` and `json`, for serve.ts to write in one go instead
// of reading them back through the Response's stream (several promise turns per request). A
// response made any other way (a stream, a copy with other headers) is not here and is streamed.
const wholeBodies = new WeakMap<Response, string>();

/** The whole body of a response made by `text` or `json` (undefined: stream it). */
export function wholeBody(response: Response): string | undefined {
  return wholeBodies.get(response);
}

export function text(body: string, status = 200): Response {
  const response = new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
  wholeBodies.set(response, body);
  return response;
}

export function json(body: unknown, status = 200): Response {
  const serialized = JSON.stringify(body ?? null);
  const response = new Response(serialized, { status, headers: { "content-type": "application/json" } });
  wholeBodies.set(response, serialized);
  return response;
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

/**
 * A request body to pass on as a stream (a file for the object storage), at most `limitBytes`:
 * with a Content-Length it is streamed, and refused up front when larger; without one it is read
 * up to the limit, since the store needs the length before the first byte.
 */
export async function boundedBody(
  request: Request,
  limitBytes: number,
): Promise<{ body: ReadableStream<Uint8Array> | Uint8Array; length: number }> {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared)) {
    const length = Number(declared);
    if (length > limitBytes) throw new PayloadTooLargeError(limitBytes);
    return { body: request.body ?? new Uint8Array(), length };
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body?.getReader();
  for (;;) {
    const next = await reader?.read();
    if (!next || next.done) break;
    size += next.value.byteLength;
    if (size > limitBytes) {
      await reader!.cancel().catch(() => {});
      throw new PayloadTooLargeError(limitBytes);
    }
    chunks.push(next.value);
  }
  return { body: Buffer.concat(chunks), length: size };
}

/**
 * Parses a JSON body, refusing oversized or malformed ones with a 4xx that says why, and values
 * the database cannot hold (NUL, unpaired surrogates, nesting past MAX_JSON_DEPTH) with a 400
 * naming the field, before any handler sees them.
 */
export async function readJson(request: Request): Promise<unknown> {
  const raw = await readText(request);
  if (!raw.trim()) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new AppError("INVALID_INPUT", "body: not valid JSON", "body");
  }
  checkJsonInput(parsed);
  return parsed;
}

export function readObject(value: unknown, field = "body"): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AppError("INVALID_INPUT", `${field}: must be a JSON object`, field);
  }
  return value as Record<string, unknown>;
}
