"use client";
import type { ReactNode } from "react";
import type { ExpressionContext } from "./expression-editor";
import { ExpressionEditor } from "./inputs-form";
import type { FlowModule, InputTransform } from "./model";

function numberText(transform: InputTransform | undefined): string {
  if (!transform || transform.type !== "static" || transform.value === undefined || transform.value === null)
    return "";
  return String(transform.value);
}

function toNumber(text: string): number | undefined {
  const trimmed = text.trim();
  return trimmed === "" ? undefined : Number(trimmed);
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <fieldset className="m-0 stack min-w-0 rounded-md border border-line p-2">
      <legend className="px-1 text-sm font-semibold">{title}</legend>
      {children}
    </fieldset>
  );
}

/**
 * A step's options: retries (constant or exponential), timeout, sleep, skip and stop conditions,
 * continue on error, approval (suspend) and the worker tag.
 */
export function StepSettings({
  module,
  onChange,
  context,
  readOnly,
  errorFor,
}: {
  module: FlowModule;
  onChange: (module: FlowModule) => void;
  context: ExpressionContext;
  readOnly?: boolean;
  errorFor?: (field: string) => string | null;
}) {
  const set = (patch: Partial<FlowModule>) => {
    const next: FlowModule = { ...module, ...patch };
    for (const [key, value] of Object.entries(patch)) {
      if (value === undefined) delete (next as Record<string, unknown>)[key];
    }
    onChange(next);
  };
  const retryKind = module.retry?.exponential ? "exponential" : module.retry?.constant ? "constant" : "none";
  const value = module.value;
  const tagField = value.type === "rawscript" ? "tag" : value.type === "script" ? "tag_override" : null;
  const tag = tagField ? (((value as Record<string, unknown>)[tagField] as string | undefined) ?? "") : "";
  const error = (field: string) => {
    const message = errorFor?.(field);
    return message ? (
      <span className="field-error" role="alert">
        {message}
      </span>
    ) : null;
  };
  const id = module.id;
  return (
    <div className="stack" data-testid="step-settings">
      <Section title="Retries">
        <label>
          Retry
          <select
            name={`${id}-retry`}
            value={retryKind}
            disabled={readOnly}
            onChange={(event) => {
              const kind = event.target.value;
              set({
                retry:
                  kind === "constant"
                    ? { constant: { attempts: 2, seconds: 1 } }
                    : kind === "exponential"
                      ? { exponential: { attempts: 3, multiplier: 2, seconds: 1 } }
                      : undefined,
              });
            }}
          >
            <option value="none">No retry</option>
            <option value="constant">Constant delay</option>
            <option value="exponential">Exponential backoff</option>
          </select>
        </label>
        {retryKind === "constant" && (
          <div className="row flex-wrap">
            <label>
              Attempts
              <input
                type="number"
                min={0}
                value={module.retry?.constant?.attempts ?? ""}
                disabled={readOnly}
                onChange={(e) =>
                  set({
                    retry: { constant: { ...module.retry?.constant, attempts: toNumber(e.target.value) } },
                  })
                }
              />
            </label>
            <label>
              Seconds between
              <input
                type="number"
                min={0}
                value={module.retry?.constant?.seconds ?? ""}
                disabled={readOnly}
                onChange={(e) =>
                  set({
                    retry: { constant: { ...module.retry?.constant, seconds: toNumber(e.target.value) } },
                  })
                }
              />
            </label>
          </div>
        )}
        {retryKind === "exponential" && (
          <div className="row flex-wrap">
            {(["attempts", "multiplier", "seconds"] as const).map((key) => (
              <label key={key}>
                {key === "seconds" ? "Base seconds" : key[0]!.toUpperCase() + key.slice(1)}
                <input
                  type="number"
                  min={0}
                  value={module.retry?.exponential?.[key] ?? ""}
                  disabled={readOnly}
                  onChange={(e) =>
                    set({
                      retry: {
                        exponential: { ...module.retry?.exponential, [key]: toNumber(e.target.value) },
                      },
                    })
                  }
                />
              </label>
            ))}
          </div>
        )}
        {error("retry")}
      </Section>

      <Section title="Time">
        <div className="row flex-wrap">
          <label>
            Timeout <span className="hint">seconds</span>
            <input
              type="number"
              min={1}
              name={`${id}-timeout`}
              value={numberText(module.timeout)}
              disabled={readOnly}
              onChange={(e) => {
                const n = toNumber(e.target.value);
                set({ timeout: n === undefined ? undefined : { type: "static", value: n } });
              }}
            />
          </label>
          <label>
            Sleep after <span className="hint">seconds</span>
            <input
              type="number"
              min={0}
              name={`${id}-sleep`}
              value={numberText(module.sleep)}
              disabled={readOnly}
              onChange={(e) => {
                const n = toNumber(e.target.value);
                set({ sleep: n === undefined ? undefined : { type: "static", value: n } });
              }}
            />
          </label>
        </div>
        {error("timeout")}
        {error("sleep")}
      </Section>

      <Section title="Conditions">
        <label className="flex-row items-center gap-2">
          <input
            type="checkbox"
            checked={!!module.skip_if}
            disabled={readOnly}
            onChange={(e) => set({ skip_if: e.target.checked ? { expr: "false" } : undefined })}
          />
          Skip this step when an expression is true
        </label>
        {module.skip_if && (
          <ExpressionEditor
            key={`${id}-skip`}
            label="Skip if"
            value={module.skip_if.expr}
            onChange={(expr) => set({ skip_if: { expr } })}
            context={context}
            readOnly={readOnly}
          />
        )}
        {error("skip_if")}
        <label className="flex-row items-center gap-2">
          <input
            type="checkbox"
            checked={!!module.stop_after_if}
            disabled={readOnly}
            onChange={(e) =>
              set({ stop_after_if: e.target.checked ? { expr: "false", skip_if_stopped: false } : undefined })
            }
          />
          Stop the flow after this step when an expression is true{" "}
          <span className="hint">(it sees the step&apos;s result as result)</span>
        </label>
        {module.stop_after_if && (
          <>
            <ExpressionEditor
              key={`${id}-stop`}
              label="Stop after if"
              value={module.stop_after_if.expr}
              onChange={(expr) => set({ stop_after_if: { ...module.stop_after_if!, expr } })}
              context={context}
              readOnly={readOnly}
            />
            <label className="flex-row items-center gap-2">
              <input
                type="checkbox"
                checked={!!module.stop_after_if.skip_if_stopped}
                disabled={readOnly}
                onChange={(e) =>
                  set({ stop_after_if: { ...module.stop_after_if!, skip_if_stopped: e.target.checked } })
                }
              />
              Mark the flow skipped when it stops here
            </label>
            <label>
              Error message when it stops <span className="hint">optional: makes the stop a failure</span>
              <input
                value={module.stop_after_if.error_message ?? ""}
                disabled={readOnly}
                onChange={(e) =>
                  set({
                    stop_after_if: { ...module.stop_after_if!, error_message: e.target.value || undefined },
                  })
                }
              />
            </label>
          </>
        )}
        {error("stop_after_if")}
        <label className="flex-row items-center gap-2">
          <input
            type="checkbox"
            checked={!!module.continue_on_error}
            disabled={readOnly}
            onChange={(e) => set({ continue_on_error: e.target.checked || undefined })}
          />
          Continue the flow when this step fails
        </label>
      </Section>

      <Section title="Approval">
        <label className="flex-row items-center gap-2">
          <input
            type="checkbox"
            checked={!!module.suspend}
            disabled={readOnly}
            onChange={(e) =>
              set({ suspend: e.target.checked ? { required_events: 1, timeout: 1800 } : undefined })
            }
          />
          Wait for approval after this step
        </label>
        {module.suspend && (
          <div className="row flex-wrap">
            <label>
              Approvals needed
              <input
                type="number"
                min={1}
                value={module.suspend.required_events ?? 1}
                disabled={readOnly}
                onChange={(e) =>
                  set({ suspend: { ...module.suspend, required_events: toNumber(e.target.value) } })
                }
              />
            </label>
            <label>
              Timeout <span className="hint">seconds</span>
              <input
                type="number"
                min={1}
                value={module.suspend.timeout ?? ""}
                disabled={readOnly}
                onChange={(e) => set({ suspend: { ...module.suspend, timeout: toNumber(e.target.value) } })}
              />
            </label>
            <label className="flex-row items-center gap-2">
              <input
                type="checkbox"
                checked={!!module.suspend.self_approval_disabled}
                disabled={readOnly}
                onChange={(e) =>
                  set({
                    suspend: { ...module.suspend, self_approval_disabled: e.target.checked || undefined },
                  })
                }
              />
              The one who started the flow may not approve
            </label>
          </div>
        )}
        {error("suspend")}
      </Section>

      {tagField && (
        <Section title="Worker">
          <label>
            Tag <span className="hint">empty: the language&apos;s default tag</span>
            <input
              name={`${id}-tag`}
              value={tag}
              disabled={readOnly}
              onChange={(e) =>
                onChange({
                  ...module,
                  value: { ...value, [tagField]: e.target.value || undefined } as FlowModule["value"],
                })
              }
            />
          </label>
          {error(`value.${tagField}`)}
        </Section>
      )}
    </div>
  );
}
