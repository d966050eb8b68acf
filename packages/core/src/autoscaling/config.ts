// A worker group's `autoscaling` config, as Windmill's worker group config holds it:
// `{ enabled, min_workers, max_workers, cooldown_seconds, integration: { type, … } }` and Windmill's
// advanced keys (inc_scale_num_jobs_waiting, full_scale_jobs_waiting, full_scale_cooldown_seconds,
// inc/dec_scale_occupancy_rate, inc_num_workers, custom_tags), which decide.ts applies. Validated
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

const seconds = z
  .number({ error: "must be a number of seconds" })
  .int("must be a whole number of seconds")
  .min(0, "must be 0 or more")
  .max(24 * 3600, "must be at most a day");

const percent = z
  .number({ error: "must be a percentage (0-100)" })
  .min(0, "must be 0 or more (a percentage)")
  .max(100, "must be at most 100 (a percentage)");

/** Every key an `autoscaling` config may hold: Millrace's and Windmill's (see the docs' "Autoscaling"). */
export const AUTOSCALING_KEYS = [
  "enabled",
  "min_workers",
  "max_workers",
  "cooldown_seconds",
  "integration",
  "inc_scale_num_jobs_waiting",
  "full_scale_jobs_waiting",
  "full_scale_cooldown_seconds",
  "inc_scale_occupancy_rate",
  "dec_scale_occupancy_rate",
  "inc_num_workers",
  "custom_tags",
] as const;

export const autoscalingConfigSchema = z
  .strictObject(
    {
      enabled: z.boolean({ error: "must be true or false" }),
      min_workers: count,
      max_workers: count.min(1, "must be at least 1"),
      cooldown_seconds: seconds.optional(),
      integration: integrationSchema,
      // Windmill's advanced settings (its worker group config's names; rates in percent).
      // Jobs waiting beyond the idle workers that add workers (default 1: any job waiting).
      inc_scale_num_jobs_waiting: z
        .number({ error: "must be a number of jobs" })
        .int("must be a whole number of jobs")
        .min(1, "must be at least 1")
        .max(1_000_000, "must be at most 1000000")
        .optional(),
      // Jobs waiting that take the group straight to max_workers (a full scale out; unset: none).
      full_scale_jobs_waiting: z
        .number({ error: "must be a number of jobs" })
        .int("must be a whole number of jobs")
        .min(1, "must be at least 1")
        .max(1_000_000, "must be at most 1000000")
        .optional(),
      // The cooldown after a full scale out (default 0: none).
      full_scale_cooldown_seconds: seconds.optional(),
      // Occupancy (percent) at or above which a worker is added (default 75).
      inc_scale_occupancy_rate: percent.optional(),
      // Occupancy (percent) below which the group shrinks (default 25).
      dec_scale_occupancy_rate: percent.optional(),
      // Workers added or removed by an occupancy step (default 1).
      inc_num_workers: count.min(1, "must be at least 1").optional(),
      // The tags whose waiting jobs the group scales on, instead of its worker_tags.
      custom_tags: z
        .array(
          z
            .string({ error: "must be a tag" })
            .regex(/^[A-Za-z0-9_.$/-]{1,128}$/, "is not a tag (1-128 letters, digits, _ . - / or $)"),
          { error: "must be a list of tags" },
        )
        .max(100, "at most 100 tags")
        .optional(),
    },
    {
      error: (issue) =>
        issue.code === "unrecognized_keys"
          ? `not an autoscaling setting (supported: ${AUTOSCALING_KEYS.join(", ")})`
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
    const inc = config.inc_scale_occupancy_rate ?? 75;
    const dec = config.dec_scale_occupancy_rate ?? 25;
    if (dec >= inc) {
      ctx.addIssue({
        code: "custom",
        path: [
          config.dec_scale_occupancy_rate === undefined
            ? "inc_scale_occupancy_rate"
            : "dec_scale_occupancy_rate",
        ],
        message: `dec_scale_occupancy_rate must be below inc_scale_occupancy_rate (${dec} >= ${inc})`,
      });
    }
  });

export type AutoscalingConfig = z.infer<typeof autoscalingConfigSchema>;
export type AutoscalingIntegration = AutoscalingConfig["integration"];
