/** A list's sort: which column, which way; `null` keeps the order the server gave. */
export type SortState = { column: number; descending: boolean } | null;

/** A header click: ascending, then descending, then back to the server's order. */
export function nextSort(current: SortState, column: number): SortState {
  if (current?.column !== column) return { column, descending: false };
  return current.descending ? null : { column, descending: true };
}

/** The rows in the sort's order, numbers as numbers and text by locale; a stable sort, on a copy. */
export function sortRows<Row>(
  rows: Row[],
  by: ((row: Row) => string | number) | undefined,
  descending: boolean,
): Row[] {
  if (!by) return rows;
  return [...rows].sort((a, b) => {
    const x = by(a);
    const y = by(b);
    const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return descending ? -order : order;
  });
}
