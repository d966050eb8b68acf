"use client";
import { ChevronDown, ChevronRight } from "lucide-react";
import { useState } from "react";

/** A scalar as JSON text (strings quoted), coloured by kind. */
function Scalar({ value }: { value: unknown }) {
  const text = value === undefined ? "undefined" : JSON.stringify(value);
  const colour =
    typeof value === "string"
      ? "text-ok"
      : typeof value === "number"
        ? "text-accent"
        : value === null
          ? "text-muted"
          : "text-warn";
  return <span className={`${colour} break-all whitespace-pre-wrap`}>{text}</span>;
}

function summary(value: object): string {
  if (Array.isArray(value)) return `[ ${value.length} item${value.length === 1 ? "" : "s"} ]`;
  const keys = Object.keys(value).length;
  return `{ ${keys} key${keys === 1 ? "" : "s"} }`;
}

/** One node: a scalar, or an object/array that opens and closes (open to `openDepth` levels). */
function Node({
  label,
  value,
  depth,
  openDepth,
}: {
  label?: string;
  value: unknown;
  depth: number;
  openDepth: number;
}) {
  const [open, setOpen] = useState(depth < openDepth);
  const keyLabel = label !== undefined && <span className="text-fg">{label}: </span>;
  if (value === null || typeof value !== "object") {
    return (
      <li className="pl-5">
        {keyLabel}
        <Scalar value={value} />
      </li>
    );
  }
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [String(index), item])
    : Object.entries(value);
  const Icon = open ? ChevronDown : ChevronRight;
  return (
    <li>
      <button
        type="button"
        className="inline-flex cursor-pointer items-center gap-0.5 border-0 bg-transparent p-0 text-left font-mono text-inherit hover:bg-hover"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
      >
        <Icon className="size-4 shrink-0" aria-hidden />
        {keyLabel}
        <span className="text-muted">{summary(value)}</span>
      </button>
      {open && entries.length > 0 && (
        <ul className="m-0 list-none border-l border-line pl-3">
          {entries.map(([key, item]) => (
            <Node key={key} label={key} value={item} depth={depth + 1} openDepth={openDepth} />
          ))}
        </ul>
      )}
    </li>
  );
}

/** A collapsible view of a JSON value: objects and arrays open and close, scalars show as JSON. */
export function JsonTree({ value, openDepth = 2 }: { value: unknown; openDepth?: number }) {
  return (
    <ul className="m-0 list-none p-0 font-mono text-[12.5px] leading-relaxed" data-testid="json-tree">
      <Node value={value} depth={0} openDepth={openDepth} />
    </ul>
  );
}
