import assert from "node:assert/strict";
import { test } from "node:test";
import { isDatabaseUnavailable, isTransientDatabaseError } from "./errors.ts";

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

test("the database's state, however wrapped, is unavailability; a bad statement is not", () => {
  // pg's own error, behind a cause chain (core wraps some).
  assert.equal(isDatabaseUnavailable(new Error("outer", { cause: withCode("57P01") })), true);
  // A write on a demoted primary.
  assert.equal(isDatabaseUnavailable(withCode("25006")), true);
  // Prisma's known codes, and its driver adapter's kinds.
  assert.equal(isDatabaseUnavailable(withCode("P1001")), true);
  assert.equal(isDatabaseUnavailable(withCode("P2037")), true);
  const adapter = (cause: object) =>
    Object.assign(new Error("prisma"), { code: "P2010", meta: { driverAdapterError: { cause } } });
  assert.equal(isDatabaseUnavailable(adapter({ kind: "TooManyConnections" })), true);
  assert.equal(isDatabaseUnavailable(adapter({ kind: "postgres", originalCode: "57P03" })), true);
  assert.equal(isDatabaseUnavailable(adapter({ kind: "postgres", originalCode: "23505" })), false);
  assert.equal(isDatabaseUnavailable(adapter({ kind: "UniqueConstraintViolation" })), false);
  // adapter-pg's DriverAdapterError: its cause is a plain object.
  const driverError = (cause: object) => Object.assign(new Error("DriverAdapterError"), { cause });
  assert.equal(isDatabaseUnavailable(driverError({ kind: "postgres", originalCode: "57P01" })), true);
  assert.equal(isDatabaseUnavailable(driverError({ kind: "DatabaseNotReachable" })), true);
  assert.equal(isDatabaseUnavailable(driverError({ kind: "postgres", originalCode: "42P01" })), false);
  for (const code of ["22021", "23505", "42P01", "P2002", "P2025"])
    assert.equal(isDatabaseUnavailable(withCode(code)), false, code);
  assert.equal(isDatabaseUnavailable(new Error("a bug")), false);
});
