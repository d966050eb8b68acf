export type AppErrorCode =
  | "UNAUTHORIZED"
  | "NOT_FOUND"
  | "FORBIDDEN"
  | "CONFLICT"
  | "INVALID_INPUT"
  | "LIMIT_EXCEEDED"
  /** A service Millrace calls for the caller (a workspace's object storage) failed or refused. */
  | "UPSTREAM_FAILED";

/**
 * The one error type business logic throws. `field` names the input at fault so that the REST
 * API and the UI can point at it. tRPC and REST map the code once (see apps/web/server).
 */
export class AppError extends Error {
  readonly code: AppErrorCode;
  readonly field: string | undefined;

  constructor(code: AppErrorCode, message: string, field?: string) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.field = field;
  }
}

export const HTTP_STATUS: Record<AppErrorCode, number> = {
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  FORBIDDEN: 403,
  CONFLICT: 409,
  INVALID_INPUT: 400,
  LIMIT_EXCEEDED: 429,
  UPSTREAM_FAILED: 502,
};

export function invalidInput(field: string, message: string): AppError {
  return new AppError("INVALID_INPUT", `${field}: ${message}`, field);
}

export function notFound(what: string): AppError {
  return new AppError("NOT_FOUND", `${what} not found`);
}
