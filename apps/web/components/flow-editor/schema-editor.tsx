"use client";
import { ArrowDown, ArrowUp, Plus, X } from "lucide-react";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import type { FlowSchema, SchemaProperty } from "./model";

const TYPES = ["string", "number", "integer", "boolean", "object", "array"] as const;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function defaultText(property: SchemaProperty): string {
  if (property.default === undefined) return "";
  return typeof property.default === "string" ? property.default : JSON.stringify(property.default);
}

/** A default typed in the form, as its type takes it (JSON for objects, lists and numbers). */
function parseDefault(type: string | undefined, text: string): unknown {
  if (text === "") return undefined;
  if (type === "string" || type === undefined) return text;
  if (type === "boolean") return text === "true";
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The flow's own inputs: name, type, default, description and whether each is required. */
export function SchemaEditor({
  schema,
  onChange,
  readOnly,
}: {
  schema: FlowSchema;
  onChange: (schema: FlowSchema) => void;
  readOnly?: boolean;
}) {
  const [name, setName] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const setProperty = (arg: string, property: SchemaProperty) =>
    onChange({ ...schema, properties: { ...schema.properties, [arg]: property } });
  const add = () => {
    const trimmed = name.trim();
    if (!NAME.test(trimmed)) {
      setProblem("Use letters, digits and _ for the input's name, starting with a letter or _.");
      return;
    }
    if (schema.properties[trimmed]) {
      setProblem(`The flow already has an input named ${trimmed}.`);
      return;
    }
    setProblem(null);
    setName("");
    onChange({
      ...schema,
      properties: { ...schema.properties, [trimmed]: { type: "string", description: "" } },
      order: [...schema.order, trimmed],
    });
  };
  const remove = (arg: string) => {
    const properties = { ...schema.properties };
    delete properties[arg];
    onChange({
      ...schema,
      properties,
      order: schema.order.filter((each) => each !== arg),
      required: schema.required.filter((each) => each !== arg),
    });
  };
  const move = (arg: string, by: -1 | 1) => {
    const order = [...schema.order];
    const from = order.indexOf(arg);
    const to = from + by;
    if (from < 0 || to < 0 || to >= order.length) return;
    order.splice(from, 1);
    order.splice(to, 0, arg);
    onChange({ ...schema, order });
  };
  return (
    <div className="stack" data-testid="schema-editor">
      {schema.order.length === 0 && <p className="muted m-0">The flow takes no inputs yet.</p>}
      {schema.order.map((arg, index) => {
        const property = schema.properties[arg] ?? {};
        const required = schema.required.includes(arg);
        return (
          <fieldset
            key={arg}
            className="m-0 stack min-w-0 rounded-md border border-line p-2"
            data-testid={`schema-arg-${arg}`}
          >
            <legend className="px-1 text-sm font-semibold">
              <code>{arg}</code>
            </legend>
            <div className="row flex-wrap items-end">
              <label>
                Type
                <select
                  name={`schema-${arg}-type`}
                  value={property.type ?? "string"}
                  disabled={readOnly}
                  onChange={(e) => {
                    const next: SchemaProperty = { ...property, type: e.target.value };
                    delete next.default;
                    setProperty(arg, next);
                  }}
                >
                  {TYPES.map((type) => (
                    <option key={type}>{type}</option>
                  ))}
                </select>
              </label>
              <label className="min-w-32 flex-1">
                Default
                <input
                  name={`schema-${arg}-default`}
                  value={defaultText(property)}
                  disabled={readOnly}
                  onChange={(e) => {
                    const next: SchemaProperty = {
                      ...property,
                      default: parseDefault(property.type, e.target.value),
                    };
                    if (next.default === undefined) delete next.default;
                    setProperty(arg, next);
                  }}
                />
              </label>
              <label className="flex-row items-center gap-2">
                <input
                  type="checkbox"
                  name={`schema-${arg}-required`}
                  checked={required}
                  disabled={readOnly}
                  onChange={(e) =>
                    onChange({
                      ...schema,
                      required: e.target.checked
                        ? [...schema.required, arg]
                        : schema.required.filter((each) => each !== arg),
                    })
                  }
                />
                Required
              </label>
            </div>
            <label>
              Description
              <input
                name={`schema-${arg}-description`}
                value={property.description ?? ""}
                disabled={readOnly}
                onChange={(e) => setProperty(arg, { ...property, description: e.target.value })}
              />
            </label>
            {!readOnly && (
              <div className="row gap-1">
                <Button
                  size="icon"
                  variant="ghost"
                  aria-label={`Move ${arg} up`}
                  disabled={index === 0}
                  onClick={() => move(arg, -1)}
                >
                  <ArrowUp aria-hidden />
                </Button>
                <Button
                  size="icon"
                  variant="ghost"
                  aria-label={`Move ${arg} down`}
                  disabled={index === schema.order.length - 1}
                  onClick={() => move(arg, 1)}
                >
                  <ArrowDown aria-hidden />
                </Button>
                <Button size="sm" variant="ghost" onClick={() => remove(arg)}>
                  <X aria-hidden /> Remove {arg}
                </Button>
              </div>
            )}
          </fieldset>
        );
      })}
      {!readOnly && (
        <form
          className="row flex-wrap items-end"
          onSubmit={(event) => {
            event.preventDefault();
            add();
          }}
        >
          <label className="min-w-32 flex-1">
            New input name
            <input
              name="new-input"
              value={name}
              aria-invalid={!!problem}
              onChange={(e) => setName(e.target.value)}
            />
            {problem && <span className="field-error">{problem}</span>}
          </label>
          <Button type="submit" data-testid="add-input">
            <Plus aria-hidden /> Add input
          </Button>
        </form>
      )}
    </div>
  );
}
