import assert from "node:assert/strict";
import { test } from "node:test";
import { nextSort, sortRows } from "./data-table-sort.ts";

test("a header click cycles ascending, descending, then the server's order", () => {
  assert.deepEqual(nextSort(null, 1), { column: 1, descending: false });
  assert.deepEqual(nextSort({ column: 1, descending: false }, 1), { column: 1, descending: true });
  assert.equal(nextSort({ column: 1, descending: true }, 1), null);
  assert.deepEqual(nextSort({ column: 1, descending: true }, 2), { column: 2, descending: false });
});

test("rows sort by text or number, either way, without touching the list given", () => {
  const rows = [
    { path: "u/b", steps: 10 },
    { path: "u/a", steps: 2 },
    { path: "u/c", steps: 1 },
  ];
  assert.deepEqual(
    sortRows(rows, (row) => row.path, false).map((row) => row.path),
    ["u/a", "u/b", "u/c"],
  );
  assert.deepEqual(
    sortRows(rows, (row) => row.steps, true).map((row) => row.steps),
    [10, 2, 1],
  );
  assert.equal(sortRows(rows, undefined, false), rows);
  assert.equal(rows[0]!.path, "u/b");
});
