// Flow steps as the flow integration tests write them (OpenFlow modules, loosely typed: tests
// also send what the format refuses).
export type StepModule = Record<string, unknown>;

/** An inline bash step; `inputs` are JavaScript expressions by argument name. */
export function bashStep(
  id: string,
  content: string,
  inputs: Record<string, string> = {},
  extra: StepModule = {},
): StepModule {
  return {
    id,
    value: {
      type: "rawscript",
      language: "bash",
      content,
      input_transforms: Object.fromEntries(
        Object.entries(inputs).map(([name, expr]) => [name, { type: "javascript", expr }]),
      ),
    },
    ...extra,
  };
}
