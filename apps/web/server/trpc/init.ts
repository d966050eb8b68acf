import { initTRPC, TRPCError } from "@trpc/server";
import { z, ZodError } from "zod";
import {
  AppError,
  checkJsonInput,
  requireMembership,
  type AppErrorCode,
  type Principal,
} from "@millrace/core";
import { principalFromRequest } from "../auth/principal.ts";
import {
  DATABASE_UNAVAILABLE_MESSAGE,
  isSecretKeyError,
  logInternalError,
  logSecretKeyError,
  noteDatabaseUnavailable,
} from "../http.ts";
import { getServices, type Services } from "../services.ts";

export interface TrpcContext {
  services: Services;
  principal: Principal | null;
}

export async function createTrpcContext(request: Request): Promise<TrpcContext> {
  try {
    const services = await getServices();
    let principal: Principal | null = null;
    try {
      principal = await principalFromRequest(request);
    } catch (error) {
      // A webhook token is refused here (it may only run its script over REST).
      if (error instanceof AppError && error.code === "FORBIDDEN") {
        throw new TRPCError({ code: "FORBIDDEN", message: error.message, cause: error });
      }
      if (!(error instanceof AppError && error.code === "UNAUTHORIZED")) throw error;
    }
    return { services, principal };
  } catch (error) {
    // Reading the session needs the database: while it is away, 503 rather than 500.
    if (noteDatabaseUnavailable(error, { route: "trpc (context)" })) {
      throw new TRPCError({
        code: "SERVICE_UNAVAILABLE",
        message: DATABASE_UNAVAILABLE_MESSAGE,
        cause: error,
      });
    }
    throw error;
  }
}

const TRPC_CODE: Record<AppErrorCode, TRPCError["code"]> = {
  UNAUTHORIZED: "UNAUTHORIZED",
  NOT_FOUND: "NOT_FOUND",
  FORBIDDEN: "FORBIDDEN",
  CONFLICT: "CONFLICT",
  INVALID_INPUT: "BAD_REQUEST",
  LIMIT_EXCEEDED: "TOO_MANY_REQUESTS",
  UPSTREAM_FAILED: "BAD_GATEWAY",
};

const t = initTRPC.context<TrpcContext>().create({
  errorFormatter({ shape, error, path }) {
    const cause = error.cause;
    let field: string | undefined;
    if (cause instanceof AppError) field = cause.field;
    if (cause instanceof ZodError) field = cause.issues[0]?.path.join(".");
    if (error.code === "INTERNAL_SERVER_ERROR") {
      // Logged here, once, without the message (it may quote the input); the answer carries the
      // request id of the log line instead of the message.
      const requestId = logInternalError(cause ?? error, { route: `trpc ${path ?? "(unknown procedure)"}` });
      return {
        ...shape,
        message: `internal server error (request ${requestId})`,
        data: { ...shape.data, field, requestId },
      };
    }
    return { ...shape, data: { ...shape.data, field } };
  },
});

/**
 * Core throws AppError; turn it into the matching tRPC error once, here. A missing or wrong
 * MILLRACE_SECRET_KEY is the operator's to fix: 503 naming the variable, one log line.
 */
const appErrors = t.middleware(async ({ next, path }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof AppError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: TRPC_CODE[cause.code], message: cause.message, cause });
  }
  if (!result.ok && noteDatabaseUnavailable(result.error.cause, { route: `trpc ${path}` })) {
    throw new TRPCError({
      code: "SERVICE_UNAVAILABLE",
      message: DATABASE_UNAVAILABLE_MESSAGE,
      cause: result.error.cause,
    });
  }
  if (!result.ok && isSecretKeyError(result.error.cause)) {
    const cause = result.error.cause;
    logSecretKeyError(cause);
    throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: cause.message, cause });
  }
  return result;
});

/**
 * Every procedure's input goes through the REST API's check before any parser or handler sees
 * it: strings and keys the database cannot hold (NUL, unpaired surrogates) and nesting past
 * MAX_JSON_DEPTH are refused with a 400 naming the field.
 */
const inputCheck = t.middleware(async ({ getRawInput, next }) => {
  checkJsonInput(await getRawInput());
  return next();
});

export const router = t.router;
export const mergeRouters = t.mergeRouters;
export const publicProcedure = t.procedure.use(appErrors).use(inputCheck);

export const authedProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.principal) throw new TRPCError({ code: "UNAUTHORIZED", message: "sign in first" });
  return next({ ctx: { ...ctx, principal: ctx.principal } });
});

/** Every workspace procedure takes `workspace`; membership is loaded once (404 for non-members). */
export const workspaceProcedure = authedProcedure
  .input(z.object({ workspace: z.string().min(1) }))
  .use(async ({ ctx, input, next }) => {
    const membership = await requireMembership(ctx.services, ctx.principal, input.workspace);
    return next({ ctx: { ...ctx, membership } });
  });
