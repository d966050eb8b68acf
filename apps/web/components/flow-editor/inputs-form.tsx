"use client";
import dynamic from "next/dynamic";
import { X } from "lucide-react";
import { ArgField, type FieldSchema } from "@/components/run/arg-field";
import { Button } from "@/components/ui/button";
import type { ExpressionContext } from "./expression-editor";
import type { InputTransform } from "./model";

export const ExpressionEditor = dynamic(() => import("./expression-editor"), {
  ssr: false,
  loading: () => <div className="editor-frame" style={{ height: 64 }} />,
});

export interface InputArg {
  name: string;
  schema: FieldSchema;
  required: boolean;
}

function preview(value: unknown): string {
  if (value === undefined) return "undefined";
  const text = JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * A step's inputs: one field per argument of its code or script, each a static value (the run
 * form's field) or a JavaScript expression (with completion), and the value it had in the last
 * test run.
 */
export function InputsForm({
  stepId,
  args,
  transforms,
  onChange,
  context,
  lastArgs,
  readOnly,
  errorFor,
}: {
  stepId: string;
  args: InputArg[];
  transforms: Record<string, InputTransform>;
  onChange: (transforms: Record<string, InputTransform>) => void;
  context: ExpressionContext;
  /** The step's arguments in the last test run. */
  lastArgs?: Record<string, unknown> | null;
  readOnly?: boolean;
  errorFor?: (name: string) => string | null;
}) {
  const names = [
    ...args.map((arg) => arg.name),
    ...Object.keys(transforms).filter((name) => !args.some((arg) => arg.name === name)),
  ];
  if (names.length === 0) return <p className="muted m-0">This step takes no inputs.</p>;
  const set = (name: string, transform: InputTransform | undefined) => {
    const next = { ...transforms };
    if (transform === undefined) delete next[name];
    else next[name] = transform;
    onChange(next);
  };
  return (
    <div className="stack" data-testid="step-inputs">
      {names.map((name) => {
        const arg = args.find((each) => each.name === name);
        const transform = transforms[name];
        const mode = transform?.type === "javascript" ? "javascript" : "static";
        const error = errorFor?.(name) ?? null;
        const groupName = `${stepId}-${name}-mode`;
        return (
          <fieldset
            key={name}
            className="m-0 min-w-0 rounded-md border border-line p-2"
            data-testid={`input-${name}`}
          >
            <legend className="px-1 text-sm font-semibold">
              {name}
              {arg?.required && <span className="text-bad"> *</span>}
              {!arg && <span className="hint"> not an argument of the code</span>}
            </legend>
            <div
              className="row mb-1 flex-wrap items-center gap-3 text-sm"
              role="radiogroup"
              aria-label={`How ${name} is given`}
            >
              <label className="flex-row items-center gap-1">
                <input
                  type="radio"
                  name={groupName}
                  checked={mode === "static"}
                  disabled={readOnly}
                  onChange={() => set(name, { type: "static", value: arg?.schema.default })}
                />
                Value
              </label>
              <label className="flex-row items-center gap-1">
                <input
                  type="radio"
                  name={groupName}
                  checked={mode === "javascript"}
                  disabled={readOnly}
                  onChange={() => set(name, { type: "javascript", expr: `flow_input.${name}` })}
                />
                Expression
              </label>
              {!arg && !readOnly && (
                <Button
                  size="icon"
                  variant="ghost"
                  aria-label={`Remove input ${name}`}
                  onClick={() => set(name, undefined)}
                >
                  <X aria-hidden />
                </Button>
              )}
            </div>
            {mode === "javascript" ? (
              <ExpressionEditor
                key={`${stepId}-${name}`}
                label={`Expression for ${name}`}
                value={(transform as { expr: string }).expr}
                onChange={(expr) => set(name, { type: "javascript", expr })}
                context={context}
                readOnly={readOnly}
              />
            ) : (
              <ArgField
                name={`${stepId}.${name}`}
                label={`Value of ${name}`}
                schema={arg?.schema ?? {}}
                value={transform && transform.type === "static" ? transform.value : undefined}
                onChange={(value) => set(name, value === undefined ? undefined : { type: "static", value })}
              />
            )}
            {error && (
              <span className="field-error" role="alert">
                {error}
              </span>
            )}
            {lastArgs && name in lastArgs && (
              <p className="muted m-0 mt-1 break-all text-xs" data-testid={`input-preview-${name}`}>
                Last test: <code>{preview(lastArgs[name])}</code>
              </p>
            )}
          </fieldset>
        );
      })}
    </div>
  );
}
