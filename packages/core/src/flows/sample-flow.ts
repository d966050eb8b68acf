// Test fixture: a realistic flow with every step kind, shared by the flow tests.

/** A flow as `wmill flow push` reads it from `<name>__flow/flow.yaml`, with every step kind. */
export function sampleFlow(): Record<string, unknown> {
  return {
    summary: "Sync customers",
    description: "Pulls customers, enriches each one, notifies on failure",
    schema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        since: { type: "string", format: "date-time" },
        dry_run: { type: "boolean", default: false },
      },
      required: ["since"],
      order: ["since", "dry_run"],
    },
    value: {
      same_worker: false,
      concurrent_limit: 2,
      concurrency_time_window_s: 60,
      early_return: "b",
      modules: [
        {
          id: "a",
          summary: "Fetch customers",
          value: {
            type: "rawscript",
            content: "export async function main(since: string) { return [{ id: 1 }] }",
            language: "bun",
            lock: "",
            tag: "",
            input_transforms: { since: { type: "javascript", expr: "flow_input.since" } },
            assets: [],
          },
          retry: {
            constant: { attempts: 2, seconds: 5 },
            exponential: { attempts: 0, multiplier: 1, seconds: 1, random_factor: 0 },
          },
          timeout: { type: "static", value: 60 },
          continue_on_error: false,
        },
        {
          id: "b",
          value: {
            type: "forloopflow",
            iterator: { type: "javascript", expr: "results.a" },
            skip_failures: true,
            parallel: true,
            parallelism: { type: "static", value: 4 },
            modules: [
              {
                id: "c",
                value: {
                  type: "script",
                  path: "f/customers/enrich",
                  input_transforms: {
                    customer: { type: "javascript", expr: "flow_input.iter.value" },
                    index: { type: "javascript", expr: "flow_input.iter.index" },
                  },
                },
                skip_if: { expr: "flow_input.dry_run" },
                sleep: { type: "static", value: 1 },
              },
              {
                id: "d",
                value: {
                  type: "branchone",
                  branches: [
                    {
                      summary: "VIP",
                      expr: "results.c.tier === 'vip'",
                      modules: [
                        {
                          id: "e",
                          value: {
                            type: "flow",
                            path: "f/customers/vip_onboarding",
                            input_transforms: { customer: { type: "javascript", expr: "results.c" } },
                          },
                        },
                      ],
                    },
                  ],
                  default: [{ id: "f", value: { type: "identity" } }],
                },
              },
            ],
          },
        },
        {
          id: "g",
          value: {
            type: "branchall",
            parallel: true,
            branches: [
              {
                summary: "Log",
                skip_failure: true,
                modules: [
                  {
                    id: "h",
                    value: {
                      type: "rawscript",
                      language: "bash",
                      content: 'echo "$1"',
                      input_transforms: { msg: { type: "static", value: "done" } },
                    },
                  },
                ],
              },
              {
                modules: [
                  {
                    id: "i",
                    value: {
                      type: "rawscript",
                      language: "python3",
                      content: "def main(n):\n    return n",
                      input_transforms: { n: { type: "javascript", expr: "results.b.length" } },
                    },
                  },
                ],
              },
            ],
          },
        },
        {
          id: "j",
          value: {
            type: "whileloopflow",
            skip_failures: false,
            modules: [
              {
                id: "k",
                value: {
                  type: "rawscript",
                  language: "deno",
                  content: "export function main(n: number) { return n + 1 }",
                  input_transforms: { n: { type: "javascript", expr: "results.k ?? 0" } },
                },
                stop_after_if: { expr: "result >= 3", skip_if_stopped: false, error_message: null },
              },
            ],
          },
        },
        {
          id: "l",
          value: {
            type: "rawscript",
            language: "postgresql",
            content: "-- $1 n\nSELECT $1::int AS n",
            input_transforms: {
              database: { type: "static", value: "$res:f/customers/db" },
              n: { type: "javascript", expr: "results.j" },
            },
          },
          suspend: {
            required_events: 1,
            timeout: 1800,
            resume_form: { schema: { type: "object", properties: { ok: { type: "boolean" } } } },
            user_auth_required: true,
            user_groups_required: { type: "static", value: ["approvers"] },
            self_approval_disabled: true,
          },
          stop_after_if: { expr: "result.n === 0", skip_if_stopped: true },
        },
      ],
      failure_module: {
        id: "failure",
        value: {
          type: "rawscript",
          language: "bun",
          content: "export function main(message: string, name: string) { return { message, name } }",
          input_transforms: {
            message: { type: "javascript", expr: "error.message" },
            name: { type: "javascript", expr: "error.name" },
            last: { type: "javascript", expr: "results.l" },
          },
        },
      },
    },
  };
}
