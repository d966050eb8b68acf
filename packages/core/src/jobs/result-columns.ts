// A result's table columns in the order the script wrote them. Results are stored as jsonb, which
// keeps an object's keys shortest first: a script returning [{zeta, alpha, mid}] came back as
// [{mid, zeta, alpha}] and its table's columns with it. The completion records the order it saw
// (job.result_columns) and readers put the keys back in that order.

/** Rows looked at for the columns: a table's later rows rarely bring new keys. */
const SCANNED_ROWS = 200;
/** Past this many columns a result is not a table anyone reads column by column. */
const MAX_COLUMNS = 500;

type Row = Record<string, unknown>;

function isRow(value: unknown): value is Row {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** For a list of objects, its keys in first-seen order; for anything else, none. */
export function resultColumnsOf(result: unknown): string[] {
  if (!Array.isArray(result) || result.length === 0 || !result.every(isRow)) return [];
  const columns = new Set<string>();
  for (const row of result.slice(0, SCANNED_ROWS) as Row[]) {
    for (const key of Object.keys(row)) {
      columns.add(key);
      if (columns.size > MAX_COLUMNS) return [];
    }
  }
  return [...columns];
}

// Object.fromEntries defines each key as data, so a "__proto__" key stays a column.
function reordered(row: Row, columns: readonly string[]): Row {
  const keys = Object.keys(row);
  const present = new Set(keys);
  const listed = new Set(columns);
  const order = [...columns.filter((key) => present.has(key)), ...keys.filter((key) => !listed.has(key))];
  return Object.fromEntries(order.map((key) => [key, row[key]]));
}

/** The stored result with each row's keys back in the recorded order (then any others). */
export function inColumnOrder<T>(result: T, columns: readonly string[] | null | undefined): T {
  if (!columns || columns.length === 0 || !Array.isArray(result)) return result;
  return result.map((row: unknown) => (isRow(row) ? reordered(row, columns) : row)) as T;
}
