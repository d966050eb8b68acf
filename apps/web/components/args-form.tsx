"use client";
import type { ArgSchema } from "@millrace/runtime";

type Args = Record<string, unknown>;

/** The run form generated from a script's inferred `main` signature. */
export function ArgsForm({
  schema,
  values,
  onChange,
  errorField,
  errorText,
}: {
  schema: ArgSchema | null;
  values: Args;
  onChange: (values: Args) => void;
  errorField?: string;
  errorText?: string;
}) {
  if (!schema || schema.order.length === 0) return <p className="muted">This script takes no arguments.</p>;
  const set = (name: string, value: unknown) => onChange({ ...values, [name]: value });
  return (
    <div className="stack" data-testid="args-form">
      {schema.order.map((name) => {
        const property = schema.properties[name];
        if (!property) return null;
        const required = schema.required.includes(name);
        const invalid = errorField === `args.${name}`;
        const current = values[name] ?? property.default;
        let input;
        if (property.type === "boolean") {
          input = (
            <input
              name={name}
              type="checkbox"
              checked={!!current}
              onChange={(e) => set(name, e.target.checked)}
            />
          );
        } else if (property.type === "number" || property.type === "integer") {
          input = (
            <input
              name={name}
              type="number"
              step={property.type === "integer" ? 1 : "any"}
              value={current === undefined || current === null ? "" : String(current)}
              aria-invalid={invalid}
              onChange={(e) => set(name, e.target.value === "" ? undefined : Number(e.target.value))}
            />
          );
        } else if (property.type === "object" || property.type === "array") {
          input = (
            <textarea
              name={name}
              rows={3}
              defaultValue={current === undefined ? "" : JSON.stringify(current)}
              aria-invalid={invalid}
              onChange={(e) => {
                try {
                  set(name, e.target.value ? JSON.parse(e.target.value) : undefined);
                } catch {
                  set(name, e.target.value);
                }
              }}
            />
          );
        } else if (property.enum) {
          input = (
            <select name={name} value={String(current ?? "")} onChange={(e) => set(name, e.target.value)}>
              {!required && <option value="">(none)</option>}
              {property.enum.map((option) => (
                <option key={option}>{option}</option>
              ))}
            </select>
          );
        } else {
          input = (
            <input
              name={name}
              value={current === undefined || current === null ? "" : String(current)}
              aria-invalid={invalid}
              onChange={(e) => set(name, e.target.value)}
            />
          );
        }
        return (
          <label key={name}>
            <span>
              {name}
              {required && " *"} <span className="hint">{property.type ?? "any"}</span>
            </span>
            {input}
            {invalid && <span className="field-error">{errorText}</span>}
          </label>
        );
      })}
    </div>
  );
}
