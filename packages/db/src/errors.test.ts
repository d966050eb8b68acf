import assert from "node:assert/strict";
import { test } from "node:test";
import { isTransientDatabaseError } from "./errors.ts";

const withCode = (code: string, message = "x") => Object.assign(new Error(message), { code });

test("an unreachable, restarting or overloaded database is transient", () => {
  for (const code of [
    "EPIPE",
    "ECONNREFUSED",
    "ECONNRESET",
    "ENOENT",
    "ETIMEDOUT",
    "57P01",
    "57P03",
    "08006",
    "53300",
    "40001",
  ])
    assert.equal(isTransientDatabaseError(withCode(code)), true, code);
  assert.equal(isTransientDatabaseError(new Error("Connection terminated unexpectedly")), true);
  assert.equal(isTransientDatabaseError(new Error("timeout exceeded when trying to connect")), true);
});

test("bad data and limits are not: retrying would fail the same way", () => {
  for (const code of ["22021", "22P05", "54000", "XX000", "23505", "42P01"])
    assert.equal(isTransientDatabaseError(withCode(code)), false, code);
  assert.equal(isTransientDatabaseError(new Error("invalid input syntax")), false);
  assert.equal(isTransientDatabaseError("not an error"), false);
});
