"use client";
import type { ArgSchema } from "@millrace/runtime";
import { useId, useState } from "react";

/** Per argument, what the deployer adds to the inferred schema (core's ArgCustomization). */
export interface ArgCustomization {
  description?: string;
  default?: unknown;
  enum?: string[];
  format?: string;
  min?: number;
  max?: number;
}
export type ArgCustomizations = Record<string, ArgCustomization>;

const FORMATS = ["date-time", "date", "email", "uri", "uuid", "sql"];

/** The inferred schema with the customisations on it, as core merges them at deploy. */
export function mergeCustomizations(schema: ArgSchema | null, custom: ArgCustomizations): ArgSchema | null {
  if (!schema) return schema;
  const properties = { ...schema.properties };
  for (const [name, c] of Object.entries(custom)) {
    const property = properties[name];
    if (!property) continue;
    const next: typeof property & { minimum?: number; maximum?: number } = { ...property };
    if (c.description) next.description = c.description;
    if (c.default !== undefined && c.default !== "") next.default = c.default;
    if (c.enum && c.enum.length > 0) next.enum = c.enum;
    if (c.format) next.format = c.format;
    if (c.min !== undefined) next.minimum = c.min;
    if (c.max !== undefined) next.maximum = c.max;
    properties[name] = next;
  }
  return { ...schema, properties };
}

/** The customisations without empty entries, for deploy (null: none). */
export function cleanCustomizations(custom: ArgCustomizations): ArgCustomizations | null {
  const out: ArgCustomizations = {};
  for (const [name, c] of Object.entries(custom)) {
    const kept: ArgCustomization = {};
    if (c.description) kept.description = c.description;
    if (c.default !== undefined && c.default !== "") kept.default = c.default;
    if (c.enum && c.enum.length > 0) kept.enum = c.enum;
    if (c.format) kept.format = c.format;
    if (c.min !== undefined && !Number.isNaN(c.min)) kept.min = c.min;
    if (c.max !== undefined && !Number.isNaN(c.max)) kept.max = c.max;
    if (Object.keys(kept).length > 0) out[name] = kept;
  }
  return Object.keys(out).length > 0 ? out : null;
}

function parseDefault(text: string, type: string | undefined): unknown {
  if (text === "") return undefined;
  if (type === "number" || type === "integer") {
    const n = Number(text);
    return Number.isNaN(n) ? text : n;
  }
  if (type === "boolean") return text === "true" ? true : text === "false" ? false : text;
  if (type === "object" || type === "array") {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

function showDefault(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function ArgCard({
  name,
  type,
  custom,
  onChange,
  disabled,
  error,
}: {
  name: string;
  type: string | undefined;
  custom: ArgCustomization;
  onChange: (next: ArgCustomization) => void;
  disabled: boolean;
  error: { field: string; message: string } | null;
}) {
  const id = useId();
  // The choices as typed (a trailing comma included), parsed on each change.
  const [enumText, setEnumText] = useState((custom.enum ?? []).join(", "));
  const numeric = type === "number" || type === "integer";
  const set = (patch: Partial<ArgCustomization>) => onChange({ ...custom, ...patch });
  const errorAt = (key: string) =>
    error && error.field === `arg_customizations.${name}.${key}` ? error.message : null;
  const fieldError = (key: string) => {
    const message = errorAt(key);
    return message ? <span className="field-error">{message}</span> : null;
  };
  return (
    <fieldset className="rounded-md border border-line p-3" data-testid={`customize-${name}`}>
      <legend className="px-1 font-semibold">
        {name} <span className="hint">{type ?? "any"}</span>
      </legend>
      <div className="grid grid-cols-1 gap-2 sm:grid-cols-2">
        <label htmlFor={`${id}-description`} className="sm:col-span-2">
          Description
          <input
            id={`${id}-description`}
            value={custom.description ?? ""}
            disabled={disabled}
            onChange={(e) => set({ description: e.target.value })}
          />
          {fieldError("description")}
        </label>
        <label htmlFor={`${id}-default`}>
          Default
          <input
            id={`${id}-default`}
            value={showDefault(custom.default)}
            disabled={disabled}
            onChange={(e) => set({ default: parseDefault(e.target.value, type) })}
          />
          {fieldError("default")}
        </label>
        <label htmlFor={`${id}-format`}>
          Format
          <input
            id={`${id}-format`}
            list={`${id}-formats`}
            placeholder="e.g. email, resource-postgresql"
            value={custom.format ?? ""}
            disabled={disabled}
            onChange={(e) => set({ format: e.target.value.trim() || undefined })}
          />
          <datalist id={`${id}-formats`}>
            {FORMATS.map((format) => (
              <option key={format} value={format} />
            ))}
          </datalist>
          {fieldError("format")}
        </label>
        {!numeric && (
          <label htmlFor={`${id}-enum`} className="sm:col-span-2">
            Choices <span className="hint">comma-separated, shown as a list</span>
            <input
              id={`${id}-enum`}
              value={enumText}
              disabled={disabled}
              onChange={(e) => {
                setEnumText(e.target.value);
                const choices = e.target.value
                  .split(",")
                  .map((choice) => choice.trim())
                  .filter((choice) => choice !== "");
                set({ enum: choices.length > 0 ? choices : undefined });
              }}
            />
            {fieldError("enum")}
          </label>
        )}
        {numeric && (
          <>
            <label htmlFor={`${id}-min`}>
              Minimum
              <input
                id={`${id}-min`}
                type="number"
                value={custom.min ?? ""}
                disabled={disabled}
                onChange={(e) => set({ min: e.target.value === "" ? undefined : Number(e.target.value) })}
              />
              {fieldError("min")}
            </label>
            <label htmlFor={`${id}-max`}>
              Maximum
              <input
                id={`${id}-max`}
                type="number"
                value={custom.max ?? ""}
                disabled={disabled}
                onChange={(e) => set({ max: e.target.value === "" ? undefined : Number(e.target.value) })}
              />
              {fieldError("max")}
            </label>
          </>
        )}
      </div>
    </fieldset>
  );
}

/** "Customize arguments": per argument of the inferred signature, what the run form should say and offer. */
export function CustomizeArgs({
  schema,
  value,
  onChange,
  disabled,
  error,
}: {
  /** The schema inferred from the code (without customisations). */
  schema: ArgSchema | null;
  value: ArgCustomizations;
  onChange: (next: ArgCustomizations) => void;
  disabled: boolean;
  error: { field: string; message: string } | null;
}) {
  if (!schema || schema.order.length === 0)
    return <p className="muted">The code declares no arguments to customise.</p>;
  return (
    <div className="stack" data-testid="customize-args">
      <p className="muted m-0">
        Saved with the script on deploy: the run form shows them, and runs are checked against them.
      </p>
      {schema.order.map((name) => (
        <ArgCard
          key={name}
          name={name}
          type={schema.properties[name]?.type}
          custom={value[name] ?? {}}
          disabled={disabled}
          error={error}
          onChange={(next) => onChange({ ...value, [name]: next })}
        />
      ))}
    </div>
  );
}
