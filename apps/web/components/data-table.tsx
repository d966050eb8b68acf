"use client";
import { ArrowDown, ArrowUp, ArrowUpDown } from "lucide-react";
import Link from "@/components/ui/link";
import {
  useState,
  type HTMLAttributes,
  type KeyboardEvent,
  type ReactNode,
  type TdHTMLAttributes,
} from "react";
import { nextSort, sortRows, type SortState } from "@/components/data-table-sort";
import { ListSearch, matchesQuery } from "@/components/list-search";
import { Button } from "@/components/ui/button";
import { useConfirm, type ConfirmOptions } from "@/components/ui/confirm";
import { errorMessage } from "@/lib/errors";

export type DataTableColumn<Row> = {
  /** The header's text: also the sort button's accessible name. */
  header: string;
  /** What the header shows instead of its text (a select-all box); the text names the column. */
  title?: ReactNode;
  cell: (row: Row) => ReactNode;
  /** Makes the header a sort button; rows keep the server's order until it is clicked. */
  sortBy?: (row: Row) => string | number;
  cellProps?: (row: Row) => TdHTMLAttributes<HTMLTableCellElement> & { "data-testid"?: string };
};

export type DataTableAction<Row> = {
  /** The visible label ("Edit", "Delete"). */
  label: string;
  /** The accessible name when the label alone is ambiguous in a list: "Edit u/admin/x". */
  ariaLabel?: (row: Row) => string;
  icon?: ReactNode;
  /** Whether this row offers the action; the actions column shows when any shown row offers one. */
  available?: (row: Row) => boolean;
  /** A link action… */
  href?: (row: Row) => string;
  /** …or a button one. */
  onSelect?: (row: Row) => unknown;
  /** Asked first (an AlertDialog); the action runs only when confirmed. Use for destructive ones. */
  confirm?: (row: Row) => ConfirmOptions;
};

export type DataTableSearch<Row> = {
  /** The search box's accessible name, e.g. "Search schedules". */
  label: string;
  placeholder?: string;
  /** The texts a query's words are looked for in. */
  fields: (row: Row) => (string | null | undefined | false)[];
  /** Show the box even while the list is empty or loading (when other filters sit beside it). */
  always?: boolean;
};

/** What a list shows around its rows: search, filters, error, loading, empty and no-match. */
export type DataListProps<Row> = {
  /** The list's query (a React Query result, or `{ data }`): `data` is undefined while loading. */
  query: { data?: Row[] | undefined; error?: unknown };
  search?: DataTableSearch<Row>;
  /** A filter of the page's own (a select, a checkbox) applied before the search. */
  filter?: (row: Row) => boolean;
  /** Controls shown beside the search box (or alone, without `search`). */
  filters?: ReactNode;
  /** Said when the list holds no row at all. */
  empty?: ReactNode;
  emptyTestId?: string;
  /** Said when rows exist but none passes the search and filters. */
  noMatch?: (query: string) => ReactNode;
  /** Hides the "Loading…" line (a page that says it in its own way). */
  quietLoading?: boolean;
};

/**
 * The one list pattern, whatever its rows look like (a table, cards): search, error, loading,
 * empty and no-match states; `children` renders the rows that pass, only when there are some.
 */
export function DataList<Row>({
  query: list,
  search,
  filter,
  filters,
  empty,
  emptyTestId,
  noMatch,
  quietLoading,
  children,
}: DataListProps<Row> & { children: (shown: Row[]) => ReactNode }) {
  const { data: rows, error } = list;
  const [query, setQuery] = useState("");
  const all = (rows ?? []).filter((row) => !filter || filter(row));
  const shown = search ? all.filter((row) => matchesQuery(query, ...search.fields(row))) : all;

  const searchBox = search && (search.always || all.length > 0) && (
    <ListSearch
      label={search.label}
      placeholder={search.placeholder}
      value={query}
      onChange={setQuery}
      shown={shown.length}
      total={all.length}
    />
  );
  return (
    <>
      {filters && search ? (
        <div className="row flex-wrap items-center">
          {searchBox}
          {filters}
        </div>
      ) : (
        (filters ?? searchBox)
      )}
      {error ? <div className="error">{errorMessage(error)}</div> : null}
      {rows === undefined && !error && !quietLoading && <p className="muted">Loading…</p>}
      {rows && rows.length === 0 && empty && (
        <div className="panel empty" data-testid={emptyTestId}>
          {empty}
        </div>
      )}
      {rows && rows.length > 0 && shown.length === 0 && noMatch && (
        <div className="panel empty">{noMatch(query)}</div>
      )}
      {shown.length > 0 && children(shown)}
    </>
  );
}

/**
 * The one list pattern as a table: a DataList with optional sort, row actions (confirmed when
 * destructive) and arrow-key moves between rows. Without `search` the rows show as given, for a
 * list the server filters. Filtering and sorting happen here, never on the server.
 */
export function DataTable<Row>({
  columns,
  rowKey,
  rowProps,
  actions = [],
  label,
  testId,
  quietHeaders,
  ...list
}: DataListProps<Row> & {
  columns: DataTableColumn<Row>[];
  rowKey: (row: Row) => string;
  rowProps?: (row: Row) => HTMLAttributes<HTMLTableRowElement> & { "data-testid"?: string };
  actions?: DataTableAction<Row>[];
  /** The table's accessible name. */
  label?: string;
  testId?: string;
  /** Headers for screen readers only: a compact list whose columns speak for themselves. */
  quietHeaders?: boolean;
}) {
  const [sort, setSort] = useState<SortState>(null);
  const offered = (row: Row) => actions.filter((action) => !action.available || action.available(row));
  return (
    <DataList {...list}>
      {(matching) => {
        const shown = sort ? sortRows(matching, columns[sort.column]?.sortBy, sort.descending) : matching;
        const withActions = shown.some((row) => offered(row).length > 0);
        return (
          // relative: a header's screen-reader-only label (absolutely positioned) stays inside the
          // scrolling wrapper instead of widening the page.
          <div className="relative overflow-x-auto" data-testid={testId}>
            <table aria-label={label}>
              <thead className={quietHeaders ? "sr-only" : undefined}>
                <tr>
                  {columns.map((column, index) => (
                    <SortableHeader
                      key={column.header}
                      column={column}
                      sort={sort?.column === index ? sort : null}
                      onSort={() => setSort((current) => nextSort(current, index))}
                    />
                  ))}
                  {withActions && (
                    <th>
                      <span className="sr-only">Actions</span>
                    </th>
                  )}
                </tr>
              </thead>
              <tbody onKeyDown={moveBetweenRows}>
                {shown.map((row) => (
                  <tr key={rowKey(row)} {...rowProps?.(row)}>
                    {columns.map((column) => (
                      <td key={column.header} {...column.cellProps?.(row)}>
                        {column.cell(row)}
                      </td>
                    ))}
                    {withActions && (
                      <td>
                        {offered(row).map((action) => (
                          <RowAction key={action.label} action={action} row={row} />
                        ))}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        );
      }}
    </DataList>
  );
}

function SortableHeader<Row>({
  column,
  sort,
  onSort,
}: {
  column: DataTableColumn<Row>;
  sort: { descending: boolean } | null;
  onSort: () => void;
}) {
  if (!column.sortBy) return <th>{column.title ?? column.header}</th>;
  const Icon = !sort ? ArrowUpDown : sort.descending ? ArrowDown : ArrowUp;
  return (
    <th aria-sort={!sort ? undefined : sort.descending ? "descending" : "ascending"}>
      <button
        type="button"
        className="inline-flex items-center gap-1 border-0 bg-transparent p-0 font-[inherit] text-inherit"
        onClick={onSort}
      >
        {column.header}
        <Icon aria-hidden className="size-3 text-muted" />
      </button>
    </th>
  );
}

export function RowAction<Row>({ action, row }: { action: DataTableAction<Row>; row: Row }) {
  const confirm = useConfirm();
  const content = (
    <>
      {action.icon} {action.label}
    </>
  );
  const name = action.ariaLabel?.(row);
  if (action.href) {
    return (
      <Button asChild size="sm" variant="ghost">
        <Link href={action.href(row)} aria-label={name}>
          {content}
        </Link>
      </Button>
    );
  }
  const run = async () => {
    if (action.confirm && !(await confirm(action.confirm(row)))) return;
    await action.onSelect?.(row);
  };
  return (
    <Button size="sm" variant="ghost" aria-label={name} onClick={() => void run()}>
      {content}
    </Button>
  );
}

const FOCUSABLE = "a[href], button:not([disabled]), input:not([disabled]), [tabindex]:not([tabindex='-1'])";

/**
 * ArrowUp/ArrowDown on a row's link or button moves to the same control of the row above or
 * below (or its first one), so a long list is walked without tabbing through every action.
 */
function moveBetweenRows(event: KeyboardEvent<HTMLTableSectionElement>) {
  if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
  const target = event.target as HTMLElement;
  // Text fields and selects use the arrows themselves.
  if (target.matches("select, textarea, input:not([type=checkbox]):not([type=radio])")) return;
  const row = target.closest("tr");
  const next = event.key === "ArrowDown" ? row?.nextElementSibling : row?.previousElementSibling;
  if (!row || !next) return;
  const index = [...row.querySelectorAll<HTMLElement>(FOCUSABLE)].indexOf(target);
  const candidates = [...next.querySelectorAll<HTMLElement>(FOCUSABLE)];
  const focus = candidates[index] ?? candidates[0];
  if (!focus) return;
  event.preventDefault();
  focus.focus();
}
