// A worker group's `autoscaling` config, as Windmill's worker group config holds it:
// `{ enabled, min_workers, max_workers, cooldown_seconds, integration: { type, … } }`. Validated
// here so that group-config.ts refuses an inconsistent one naming the field (`autoscaling.min_workers`).
import { z } from "zod";
import { parsePath } from "../paths.ts";
import { AppError } from "../errors.ts";

/** A count no single group is expected to exceed; it also bounds a typo (1e6 workers). */
export const MAX_AUTOSCALED_WORKERS = 1000;
export const DEFAULT_COOLDOWN_SECS = 60;

const count = z
  .number({ error: "must be a number of workers" })
  .int("must be a whole number of workers")
  .min(0, "must be 0 or more")
  .max(MAX_AUTOSCALED_WORKERS, `must be at most ${MAX_AUTOSCALED_WORKERS}`);

// Kubernetes object names (RFC 1123 labels for namespaces, subdomains for deployments).
const K8S_NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const K8S_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

const integrationSchema = z.discriminatedUnion(
  "type",
  [
    // MODE=pool processes that host the group start and stop its workers (one per machine).
    z.strictObject({ type: z.literal("local") }),
    // A command run with the group, the desired count, the reason and the event type as
    // arguments (argv, no shell), or a script of the admins workspace run with the same as args.
    z
      .strictObject({
        type: z.literal("script"),
        command: z
          .array(z.string({ error: "must be a string" }).min(1, "must not be empty"), {
            error: "must be a list: the program, then its first arguments",
          })
          .min(1, "name the program to run")
          .max(32, "at most 32 items")
          .optional(),
        path: z
          .string({ error: "must be a script path" })
          .superRefine((value, ctx) => {
            try {
              parsePath(value, "path");
            } catch (error) {
              ctx.addIssue({
                code: "custom",
                message: error instanceof AppError ? error.message.replace(/^path: /, "") : String(error),
              });
            }
          })
          .optional(),
        // Windmill's optional worker tag for the script's job (path only).
        tag: z
          .string({ error: "must be a tag" })
          .regex(/^[A-Za-z0-9_.-]{1,64}$/, "is not a tag (1-64 letters, digits, _ . or -)")
          .optional(),
        timeout_seconds: z
          .number({ error: "must be a number of seconds" })
          .int("must be a whole number of seconds")
          .min(1, "must be at least 1 second")
          .max(600, "must be at most 600 seconds")
          .optional(),
      })
      .superRefine((value, ctx) => {
        if (!value.command === !value.path) {
          ctx.addIssue({
            code: "custom",
            path: ["command"],
            message:
              "give either command (a program and its arguments) or path (a script of the admins workspace)",
          });
        }
      }),
    // The group's Deployment, scaled through the API's scale subresource.
    z.strictObject({
      type: z.literal("kubernetes"),
      deployment: z
        .string({ error: "must be a Deployment name" })
        .regex(K8S_NAME, "is not a Kubernetes object name (lower case letters, digits, - and .)")
        .optional(),
      namespace: z
        .string({ error: "must be a namespace" })
        .regex(K8S_NAMESPACE, "is not a Kubernetes namespace (lower case letters, digits and -)")
        .optional(),
      // Path of a kubeconfig file on the servers; unset: the in-cluster service account.
      kubeconfig: z.string({ error: "must be a file path" }).min(1, "must not be empty").optional(),
    }),
  ],
  {
    error: (issue) =>
      issue.code === "invalid_union" ? 'must be "local", "script" or "kubernetes"' : "must be an object",
  },
);

export const autoscalingConfigSchema = z
  .strictObject(
    {
      enabled: z.boolean({ error: "must be true or false" }),
      min_workers: count,
      max_workers: count.min(1, "must be at least 1"),
      cooldown_seconds: z
        .number({ error: "must be a number of seconds" })
        .int("must be a whole number of seconds")
        .min(0, "must be 0 or more")
        .max(24 * 3600, "must be at most a day")
        .optional(),
      integration: integrationSchema,
    },
    {
      error: (issue) =>
        issue.code === "unrecognized_keys"
          ? "not an autoscaling setting (supported: enabled, min_workers, max_workers, cooldown_seconds, integration)"
          : issue.code === "invalid_type" && issue.input === undefined
            ? "is required"
            : "must be an object",
    },
  )
  .superRefine((config, ctx) => {
    if (config.min_workers > config.max_workers) {
      ctx.addIssue({
        code: "custom",
        path: ["min_workers"],
        message: `must not exceed max_workers (${config.min_workers} > ${config.max_workers})`,
      });
    }
  });

export type AutoscalingConfig = z.infer<typeof autoscalingConfigSchema>;
export type AutoscalingIntegration = AutoscalingConfig["integration"];
