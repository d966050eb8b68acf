"use client";
import { Search } from "lucide-react";

/** Whether every word of `query` appears (case-insensitively) in one of `fields`. */
export function matchesQuery(query: string, ...fields: (string | null | undefined | false)[]): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const text = fields.filter(Boolean).join(" ").toLowerCase();
  return words.every((word) => text.includes(word));
}

/** A list page's search box: filters a fully loaded list in the browser as one types. */
export function ListSearch({
  label,
  value,
  onChange,
  placeholder,
  shown,
  total,
}: {
  /** The box's accessible name, e.g. "Search schedules". */
  label: string;
  value: string;
  onChange: (value: string) => void;
  placeholder?: string;
  /** Rows shown and rows loaded: "3 of 12" is said while a query narrows the list. */
  shown?: number;
  total?: number;
}) {
  return (
    <div className="row my-2 items-center" role="search" aria-label={label}>
      <div className="relative">
        <Search
          aria-hidden
          className="pointer-events-none absolute left-2 top-1/2 size-4 -translate-y-1/2 text-muted"
        />
        <input
          type="search"
          aria-label={label}
          placeholder={placeholder ?? label}
          value={value}
          onChange={(event) => onChange(event.target.value)}
          className="pl-8"
        />
      </div>
      {value.trim() && shown !== undefined && total !== undefined && (
        <span className="muted" aria-live="polite">
          {shown} of {total}
        </span>
      )}
    </div>
  );
}
