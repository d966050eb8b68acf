import { z } from "zod";
import { parseEnv } from "@millrace/core/config";
import { workerEnvSchema } from "../env.ts";

// An agent worker's settings: a database worker's, minus the database and the instance key
// (secrets reach it already resolved, over HTTPS) and DEDICATED_WORKER (refused), plus the
// server and its token. Its group and
// tags are its token's; its worker names are the server's prefix for it (see agentNamePrefix).
const agentEnvSchema = workerEnvSchema
  .omit({
    DATABASE_URL: true,
    MILLRACE_SECRET_KEY: true,
    WORKER_GROUP: true,
    WORKER_TAGS: true,
    DEDICATED_WORKER: true,
    WORKER_NAME_PREFIX: true,
  })
  .extend({
    BASE_INTERNAL_URL: z.url({ error: "is required: the server's URL as this machine reaches it" }),
    AGENT_TOKEN: z
      .string({ error: "is required: a token from POST /api/agent_workers/create_agent_token" })
      .min(1, "is required: a token from POST /api/agent_workers/create_agent_token"),
    // While no job is waiting, the agent asks the server for one this often (ms).
    AGENT_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(500),
    // An agent has no database access by design: a DATABASE_URL in its environment is a
    // deployment mistake (the password on a machine meant not to hold it), refused at boot.
    DATABASE_URL: z
      .undefined({
        error: "must not be set for MODE=agent: an agent worker reaches the server over HTTP only",
      })
      .optional(),
    // A dedicated worker keeps its script warm between jobs, read from the database (DedicatedRunner):
    // not on an agent. Refused rather than ignored, so that the operator knows it is not one.
    DEDICATED_WORKER: z
      .undefined({
        error:
          "is not supported with MODE=agent: run dedicated workers as database workers (MODE=worker); an agent runs every job of its tags in a fresh process",
      })
      .optional(),
  });

export type AgentEnv = z.infer<typeof agentEnvSchema> & { BASE_URL: string };

export function loadAgentEnv(env: Record<string, string | undefined> = process.env): AgentEnv {
  const parsed = parseEnv(agentEnvSchema, env);
  return { ...parsed, BASE_URL: parsed.BASE_URL ?? parsed.BASE_INTERNAL_URL };
}
