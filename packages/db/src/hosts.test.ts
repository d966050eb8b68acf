import assert from "node:assert/strict";
import { test } from "node:test";
import { parseMultiHostUrl } from "./hosts.ts";

test("libpq's multi-host URL: each host's own URL, target_session_attrs read and dropped", () => {
  const parsed = parseMultiHostUrl(
    "postgresql://u:p%40ss@db1:5432,db2,[::1]:5433/millrace?target_session_attrs=read-write&sslmode=disable",
  );
  assert.ok(parsed);
  assert.deepEqual(parsed.hosts, [
    { host: "db1", port: 5432 },
    { host: "db2", port: 5432 },
    { host: "::1", port: 5433 },
  ]);
  assert.equal(parsed.readWrite, true);
  assert.equal(parsed.urlFor(parsed.hosts[1]!), "postgresql://u:p%40ss@db2:5432/millrace?sslmode=disable");
  assert.equal(parsed.urlFor(parsed.hosts[2]!), "postgresql://u:p%40ss@[::1]:5433/millrace?sslmode=disable");
  assert.equal(parseMultiHostUrl("postgresql://u@a:1,b:2/db")!.readWrite, false);
});

test("an ordinary URL is left to node-postgres", () => {
  assert.equal(parseMultiHostUrl("postgresql://u:p@db1:5432/millrace?host=/tmp"), null);
  assert.throws(() => parseMultiHostUrl("postgresql://u@a:1,b:x/db"), /cannot read the host "b:x"/);
});
