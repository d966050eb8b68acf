"use client";
import { useQuery } from "@tanstack/react-query";
import { Braces, ListPlus, X } from "lucide-react";
import Link from "@/components/ui/link";
import { useId, useState, type ReactNode } from "react";
import { Button } from "@/components/ui/button";
import { useTRPC } from "@/lib/trpc";

/** What a field knows of its value: the runtime's inferred shape, plus JSON schema's bounds. */
export interface FieldSchema {
  type?: string;
  enum?: string[];
  format?: string;
  items?: FieldSchema;
  properties?: Record<string, FieldSchema>;
  required?: string[];
  nullable?: boolean;
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
}

export interface FieldProps {
  /** The `name` of the input: the argument's name, `parent.child` inside objects. */
  name: string;
  label: string;
  schema: FieldSchema;
  value: unknown;
  onChange: (value: unknown) => void;
  required?: boolean;
  /** The server's error for this field, if any. */
  error?: string;
  workspace?: string;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The resource type a `resource-<type>` format names. */
export function resourceTypeOf(schema: FieldSchema): string | null {
  return schema.format?.startsWith("resource-") ? schema.format.slice("resource-".length) : null;
}

/** A structured editor exists for this shape (otherwise: JSON). */
function structured(schema: FieldSchema): boolean {
  if (resourceTypeOf(schema)) return true;
  if (schema.type === "object") return !!schema.properties && Object.keys(schema.properties).length > 0;
  if (schema.type === "array")
    return !!schema.items?.type && !(schema.items.type === "object" && !schema.items.properties);
  return !!schema.type || !!schema.enum;
}

function typeHint(schema: FieldSchema): string {
  const resource = resourceTypeOf(schema);
  if (resource) return `${resource} resource`;
  if (schema.enum) return "one of";
  if (schema.type === "array") return schema.items?.type ? `list of ${typeHint(schema.items)}` : "list";
  if (schema.format && schema.type === "string") return schema.format;
  return schema.type ?? "any JSON";
}

const pad = (n: number) => String(n).padStart(2, "0");

/** An ISO date-time as the value of `<input type="datetime-local">` (local time). */
export function toLocalInput(iso: unknown): string {
  if (typeof iso !== "string" || iso === "") return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const base = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return date.getSeconds() ? `${base}:${pad(date.getSeconds())}` : base;
}

/** The local time of a `datetime-local` input as an ISO 8601 string (UTC). */
export function fromLocalInput(text: string): string | undefined {
  if (!text) return undefined;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function defaultItem(schema: FieldSchema | undefined): unknown {
  if (!schema) return null;
  if (schema.enum) return schema.enum[0] ?? "";
  switch (schema.type) {
    case "string":
      return "";
    case "number":
    case "integer":
      return 0;
    case "boolean":
      return false;
    case "object":
      return {};
    case "array":
      return [];
    default:
      return null;
  }
}

/** The label row of a field: name, required mark, type, and the JSON toggle if any. */
function Label({
  htmlFor,
  label,
  required,
  hint,
  as = "label",
}: {
  htmlFor?: string;
  label: string;
  required?: boolean;
  hint: string;
  as?: "label" | "legend";
}) {
  const content = (
    <>
      <span className="font-medium">{label}</span>
      {required && (
        <>
          <span aria-hidden className="text-bad">
            {" "}
            *
          </span>
          <span className="sr-only"> (required)</span>
        </>
      )}{" "}
      <span className="hint">{hint}</span>
    </>
  );
  if (as === "legend") return <legend className="px-1">{content}</legend>;
  return (
    <label htmlFor={htmlFor} className="block">
      {content}
    </label>
  );
}

function Hint({ id, text }: { id: string; text?: string }) {
  if (!text) return null;
  return (
    <p id={id} className="muted m-0 text-[13px]">
      {text}
    </p>
  );
}

function FieldError({ id, text }: { id: string; text?: string }) {
  if (!text) return null;
  return (
    <p id={id} className="field-error m-0" role="alert">
      {text}
    </p>
  );
}

/** Any value as JSON text, with the parse error at the field. */
function JsonInput({
  id,
  name,
  label,
  value,
  onChange,
  describedBy,
  invalid,
}: {
  id: string;
  name: string;
  label: string;
  value: unknown;
  onChange: (value: unknown) => void;
  describedBy: string;
  invalid: boolean;
}) {
  const [text, setText] = useState(() => (value === undefined ? "" : JSON.stringify(value, null, 2)));
  const [parseError, setParseError] = useState<string | null>(null);
  const errorId = `${id}-json-error`;
  return (
    <>
      <textarea
        id={id}
        name={name}
        rows={Math.min(12, Math.max(3, text.split("\n").length))}
        className="w-full font-mono text-[12.5px]"
        value={text}
        spellCheck={false}
        aria-invalid={invalid || !!parseError}
        aria-describedby={`${describedBy} ${parseError ? errorId : ""}`.trim()}
        onChange={(event) => {
          const next = event.target.value;
          setText(next);
          if (next.trim() === "") {
            setParseError(null);
            onChange(undefined);
            return;
          }
          try {
            onChange(JSON.parse(next));
            setParseError(null);
          } catch (error) {
            setParseError(
              `${label} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
            );
            // The text as typed: the server refuses it at this field if it is not a string argument.
            onChange(next);
          }
        }}
      />
      <FieldError id={errorId} text={parseError ?? undefined} />
    </>
  );
}

/** A select of the workspace's resources of one type; the value is `$res:<path>`, as in Windmill. */
function ResourcePicker({
  id,
  name,
  type,
  value,
  onChange,
  required,
  describedBy,
  invalid,
  workspace,
}: {
  id: string;
  name: string;
  type: string;
  value: unknown;
  onChange: (value: unknown) => void;
  required?: boolean;
  describedBy: string;
  invalid: boolean;
  workspace?: string;
}) {
  const trpc = useTRPC();
  const resources = useQuery({
    ...trpc.resource.list.queryOptions({ workspace: workspace ?? "" }),
    enabled: !!workspace,
  });
  const workspaces = useQuery(trpc.workspace.list.queryOptions());
  const role = workspaces.data?.find((w) => w.id === workspace)?.role;
  const canCreate = role === "admin" || role === "developer";
  const ofType = (resources.data ?? []).filter((resource) => resource.resourceType === type);
  const current = typeof value === "string" && value.startsWith("$res:") ? value : "";
  const paths = ofType.map((resource) => `$res:${resource.path}`);
  if (current && !paths.includes(current)) paths.unshift(current);
  return (
    <>
      <select
        id={id}
        name={name}
        value={current}
        aria-invalid={invalid}
        aria-describedby={describedBy}
        data-resource-type={type}
        onChange={(event) => onChange(event.target.value === "" ? undefined : event.target.value)}
      >
        <option value="">
          {resources.isPending ? "Loading…" : required ? "Choose a resource…" : "(none)"}
        </option>
        {paths.map((path) => (
          <option key={path} value={path}>
            {path.slice("$res:".length)}
          </option>
        ))}
      </select>
      {resources.error && <p className="field-error m-0">The resources could not be read.</p>}
      {resources.data && ofType.length === 0 && (
        <p className="muted m-0 text-[13px]" data-testid="no-resources">
          No {type} resource in this workspace yet.{" "}
          {canCreate && workspace && (
            <Link href={`/w/${workspace}/resources/new`}>Create a {type} resource</Link>
          )}
        </p>
      )}
    </>
  );
}

/** One input for a value of a known scalar shape. */
function ScalarInput({
  id,
  name,
  schema,
  value,
  onChange,
  required,
  describedBy,
  invalid,
}: {
  id: string;
  name: string;
  schema: FieldSchema;
  value: unknown;
  onChange: (value: unknown) => void;
  required?: boolean;
  describedBy: string;
  invalid: boolean;
}) {
  const common = { id, name, "aria-invalid": invalid, "aria-describedby": describedBy || undefined };
  if (schema.enum) {
    return (
      <select
        {...common}
        value={value === undefined || value === null ? "" : String(value)}
        onChange={(e) => onChange(e.target.value === "" ? undefined : e.target.value)}
      >
        {(!required || value === undefined) && <option value="">{required ? "Choose…" : "(none)"}</option>}
        {schema.enum.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    );
  }
  if (schema.type === "number" || schema.type === "integer") {
    return (
      <input
        {...common}
        type="number"
        step={schema.type === "integer" ? 1 : "any"}
        min={schema.minimum}
        max={schema.maximum}
        value={value === undefined || value === null ? "" : String(value)}
        onChange={(e) => onChange(e.target.value === "" ? undefined : Number(e.target.value))}
      />
    );
  }
  if (schema.type === "string" && schema.format === "date-time") {
    return (
      <input
        {...common}
        type="datetime-local"
        step={1}
        value={toLocalInput(value)}
        onChange={(e) => onChange(fromLocalInput(e.target.value))}
      />
    );
  }
  if (schema.type === "string" && schema.format === "date") {
    return (
      <input
        {...common}
        type="date"
        value={typeof value === "string" ? value : ""}
        onChange={(e) => onChange(e.target.value === "" ? undefined : e.target.value)}
      />
    );
  }
  if (schema.type === "string" && schema.format === "sql") {
    return (
      <textarea
        {...common}
        rows={4}
        className="w-full font-mono text-[12.5px]"
        value={typeof value === "string" ? value : ""}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  }
  return (
    <input
      {...common}
      type={schema.format === "email" ? "email" : "text"}
      value={
        value === undefined || value === null ? "" : typeof value === "string" ? value : JSON.stringify(value)
      }
      onChange={(e) => onChange(e.target.value)}
    />
  );
}

function ObjectEditor({ name, schema, value, onChange, workspace }: Omit<FieldProps, "label">) {
  const object = isPlainObject(value) ? value : {};
  const properties = schema.properties ?? {};
  return (
    <div className="stack">
      {Object.entries(properties).map(([key, child]) => (
        <ArgField
          key={key}
          name={`${name}.${key}`}
          label={key}
          schema={child}
          value={object[key] ?? child.default}
          required={schema.required?.includes(key)}
          workspace={workspace}
          onChange={(next) => {
            const copy = { ...object };
            if (next === undefined) delete copy[key];
            else copy[key] = next;
            onChange(copy);
          }}
        />
      ))}
    </div>
  );
}

function ListEditor({ name, label, schema, value, onChange, workspace }: FieldProps) {
  const list = Array.isArray(value) ? value : [];
  const items = schema.items ?? {};
  // Rows keep their identity when one above is removed (the inputs keep their own state).
  const [keys, setKeys] = useState<number[]>(() => list.map((_, index) => index));
  const [nextKey, setNextKey] = useState(list.length);
  const rowKeys = keys.length === list.length ? keys : list.map((_, index) => index);
  return (
    <div className="stack">
      {list.length === 0 && <p className="muted m-0 text-[13px]">No items.</p>}
      <ol className="m-0 list-none space-y-2 p-0">
        {list.map((item, index) => (
          <li key={rowKeys[index]} className="flex items-start gap-2">
            <div className="min-w-0 flex-1">
              <ArgField
                name={`${name}[${index}]`}
                label={`${label} item ${index + 1}`}
                schema={items}
                value={item}
                workspace={workspace}
                onChange={(next) => onChange(list.map((old, i) => (i === index ? next : old)))}
              />
            </div>
            <Button
              size="icon"
              variant="ghost"
              aria-label={`Remove ${label} item ${index + 1}`}
              className="mt-5"
              onClick={() => {
                onChange(list.filter((_, i) => i !== index));
                setKeys(rowKeys.filter((_, i) => i !== index));
              }}
            >
              <X aria-hidden />
            </Button>
          </li>
        ))}
      </ol>
      <div>
        <Button
          size="sm"
          onClick={() => {
            onChange([...list, defaultItem(items)]);
            setKeys([...rowKeys, nextKey]);
            setNextKey(nextKey + 1);
          }}
        >
          <ListPlus aria-hidden /> Add {label} item
        </Button>
      </div>
    </div>
  );
}

/**
 * One argument (or one part of one): a label with the name, a required mark and the type, the
 * description as a hint, and the input its shape calls for — a resource picker, a select for an
 * enum, a date or date-time picker, a number with its bounds, a checkbox, fields for an object with
 * known properties, rows for a list — with "Edit as JSON" for structures, and JSON for the rest.
 */
export function ArgField(props: FieldProps) {
  const { name, label, schema, value, onChange, required, error, workspace } = props;
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const canStructure = structured(schema);
  const isContainer = schema.type === "object" || schema.type === "array";
  const [json, setJson] = useState(!canStructure);
  const resource = resourceTypeOf(schema);
  const describedBy = [schema.description ? hintId : "", error ? errorId : ""].filter(Boolean).join(" ");
  const invalid = !!error;
  const bounds =
    schema.minimum !== undefined || schema.maximum !== undefined
      ? ` (${schema.minimum ?? "…"} to ${schema.maximum ?? "…"})`
      : "";
  const hint = typeHint(schema) + bounds;

  const jsonToggle = canStructure && (isContainer || resource) && (
    <Button
      size="sm"
      variant="ghost"
      aria-pressed={json}
      aria-label={`Edit ${label} as JSON`}
      onClick={() => setJson(!json)}
    >
      <Braces aria-hidden /> JSON
    </Button>
  );

  let control: ReactNode;
  if (json) {
    control = (
      <JsonInput
        key="json"
        id={id}
        name={name}
        label={label}
        value={value}
        onChange={onChange}
        describedBy={describedBy}
        invalid={invalid}
      />
    );
  } else if (resource) {
    control = (
      <ResourcePicker
        id={id}
        name={name}
        type={resource}
        value={value}
        onChange={onChange}
        required={required}
        describedBy={describedBy}
        invalid={invalid}
        workspace={workspace}
      />
    );
  } else if (schema.type === "boolean") {
    return (
      <div className="stack gap-1" data-arg={name}>
        {/* flex-row: the global label rule stacks its children (a centred box over its name). */}
        <label className="flex-row items-center gap-2">
          <input
            id={id}
            name={name}
            type="checkbox"
            role="switch"
            checked={!!value}
            aria-invalid={invalid}
            aria-describedby={describedBy || undefined}
            onChange={(event) => onChange(event.target.checked)}
          />
          <span className="font-medium">{label}</span>
          {required && <span className="sr-only">(required)</span>}
          <span className="hint">boolean</span>
        </label>
        <Hint id={hintId} text={schema.description} />
        <FieldError id={errorId} text={error} />
      </div>
    );
  } else if (schema.type === "object") {
    control = <ObjectEditor {...props} />;
  } else if (schema.type === "array") {
    control = <ListEditor {...props} />;
  } else {
    control = (
      <ScalarInput
        id={id}
        name={name}
        schema={schema}
        value={value}
        onChange={onChange}
        required={required}
        describedBy={describedBy}
        invalid={invalid}
      />
    );
  }

  const grouped = !json && (schema.type === "object" || schema.type === "array") && !resource;
  if (grouped) {
    return (
      <fieldset className="stack m-0 min-w-0 rounded-md border border-line p-3" data-arg={name}>
        <Label as="legend" label={label} required={required} hint={hint} />
        <div className="flex justify-end">{jsonToggle}</div>
        <Hint id={hintId} text={schema.description} />
        {control}
        <FieldError id={errorId} text={error} />
      </fieldset>
    );
  }
  return (
    <div className="stack min-w-0 gap-1" data-arg={name}>
      <div className="flex flex-wrap items-center justify-between gap-2">
        <Label htmlFor={id} label={label} required={required} hint={hint} />
        {jsonToggle}
      </div>
      {control}
      <Hint id={hintId} text={schema.description} />
      <FieldError id={errorId} text={error} />
    </div>
  );
}
