"use client";
import type { ArgSchema } from "@millrace/runtime";
import { useParams } from "next/navigation";
import { ArgField, type FieldSchema } from "@/components/run/arg-field";

type Args = Record<string, unknown>;

/**
 * The run form generated from a script's inferred `main` signature: one labelled field per
 * argument (see ArgField for the inputs each shape gets), defaults prefilled, required ones marked,
 * the description as a hint, and the server's error (`errorField` = `args.<name>`) at its field.
 */
export function ArgsForm({
  schema,
  values,
  onChange,
  errorField,
  errorText,
  workspace,
}: {
  schema: ArgSchema | null;
  values: Args;
  onChange: (values: Args) => void;
  errorField?: string;
  errorText?: string;
  /** Whose resources the resource pickers list; by default the workspace of the page's URL. */
  workspace?: string;
}) {
  const params = useParams<{ workspace?: string }>();
  const inWorkspace = workspace ?? (typeof params?.workspace === "string" ? params.workspace : undefined);
  if (!schema || schema.order.length === 0) return <p className="muted">This script takes no arguments.</p>;
  const set = (name: string, value: unknown) => {
    const next = { ...values };
    if (value === undefined) delete next[name];
    else next[name] = value;
    onChange(next);
  };
  return (
    <div className="stack" data-testid="args-form">
      {schema.order.map((name) => {
        const property = schema.properties[name];
        if (!property) return null;
        const invalid = errorField === `args.${name}` || !!errorField?.startsWith(`args.${name}.`);
        return (
          <ArgField
            key={name}
            name={name}
            label={name}
            schema={property as FieldSchema}
            value={values[name] ?? property.default}
            onChange={(value) => set(name, value)}
            required={schema.required.includes(name)}
            error={invalid ? errorText : undefined}
            workspace={inWorkspace}
          />
        );
      })}
    </div>
  );
}
