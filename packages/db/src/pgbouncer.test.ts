import assert from "node:assert/strict";
import { test } from "node:test";
import { DIRECT_URL_REQUIRED, isTransactionPooled, sessionUrl, withoutPgbouncerParam } from "./pgbouncer.ts";

const POOLED = "postgresql://u:p@bouncer:6432/millrace?pgbouncer=true";
const DIRECT = "postgresql://u:p@db:5432/millrace";

test("pgbouncer=true marks a transaction-pooled URL, and is dropped before any client sees it", () => {
  assert.equal(isTransactionPooled(POOLED), true);
  assert.equal(isTransactionPooled("postgresql://u:p@h/db?sslmode=disable&pgbouncer=1"), true);
  assert.equal(isTransactionPooled(DIRECT), false);
  assert.equal(isTransactionPooled("postgresql://u:p@h/db?pgbouncer=false"), false);
  assert.equal(withoutPgbouncerParam(POOLED), "postgresql://u:p@bouncer:6432/millrace");
  assert.equal(
    withoutPgbouncerParam("postgresql://u:p@h/db?pgbouncer=true&sslmode=disable"),
    "postgresql://u:p@h/db?sslmode=disable",
  );
  assert.equal(
    withoutPgbouncerParam("postgresql://u:p@h/db?sslmode=disable&pgbouncer=true&x=1"),
    "postgresql://u:p@h/db?sslmode=disable&x=1",
  );
  assert.equal(withoutPgbouncerParam(DIRECT), DIRECT);
});

test("sessions go to DATABASE_URL_DIRECT behind PgBouncer, and nowhere else without it", () => {
  assert.equal(sessionUrl(DIRECT, undefined), DIRECT);
  assert.equal(sessionUrl(POOLED, DIRECT), DIRECT);
  assert.throws(() => sessionUrl(POOLED, undefined), { message: DIRECT_URL_REQUIRED });
  assert.throws(() => sessionUrl(POOLED, POOLED), /must not be transaction-pooled/);
});
