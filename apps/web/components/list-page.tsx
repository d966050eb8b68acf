"use client";
import type { ReactNode } from "react";
import { Badge } from "@/components/ui/badge";
import Link from "@/components/ui/link";
import type { DataTableAction, DataTableColumn } from "@/components/data-table";
import { Pencil } from "lucide-react";

/** A list page: its heading with the page's actions on the right, then the list. */
export function ListPage({
  title,
  actions,
  className,
  children,
}: {
  title: string;
  actions?: ReactNode;
  className?: string;
  children: ReactNode;
}) {
  return (
    <div className={className}>
      <div className="toolbar">
        <h1>{title}</h1>
        {actions && <div className="row items-center">{actions}</div>}
      </div>
      {children}
    </div>
  );
}

/** The "Show archived" box of lists that hide archived items by default. */
export function ShowArchived({
  checked,
  onChange,
}: {
  checked: boolean;
  onChange: (checked: boolean) => void;
}) {
  return (
    <label className="flex-row items-center gap-2">
      <input
        type="checkbox"
        name="show_archived"
        checked={checked}
        onChange={(event) => onChange(event.target.checked)}
      />
      Show archived
    </label>
  );
}

/** The "New …" button of a list page (a button inside a link, as the specs know it). */
export function NewButton({ href, label }: { href: string; label: string }) {
  return (
    <Link href={href}>
      <button className="primary" type="button">
        {label}
      </button>
    </Link>
  );
}

type Archivable = { path: string; archived: boolean; canWrite: boolean };

/** A "Path" column: the item's link, marked when archived. */
export function pathColumn<Row extends { path: string; archived?: boolean }>(
  href: (row: Row) => string,
): DataTableColumn<Row> {
  return {
    header: "Path",
    sortBy: (row) => row.path,
    cell: (row) => (
      <>
        <Link href={href(row)}>{row.path}</Link>
        {row.archived && (
          <>
            {" "}
            <Badge tone="warn">archived</Badge>
          </>
        )}
      </>
    ),
  };
}

/** A "when, by whom" column from two fields of the row: "29/11/2026, 09:00:00 by alice". */
export function changedColumn<At extends string, By extends string>(
  header: string,
  at: At,
  by: By,
): DataTableColumn<Record<At | By, string>> {
  return {
    header,
    sortBy: (row) => row[at],
    cell: (row) => (
      <>
        {new Date(row[at]).toLocaleString()} by {row[by]}
      </>
    ),
  };
}

/** The row action that opens an item's editor, offered where the user may write and it is live. */
export function editAction<Row extends Archivable>(href: (row: Row) => string): DataTableAction<Row> {
  return {
    label: "Edit",
    icon: <Pencil aria-hidden />,
    ariaLabel: (row) => `Edit ${row.path}`,
    available: (row) => row.canWrite && !row.archived,
    href,
  };
}
