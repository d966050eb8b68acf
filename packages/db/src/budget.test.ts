import assert from "node:assert/strict";
import { test } from "node:test";
import { connectionBudget, describeBudget, roomProblem } from "./budget.ts";

test("a process's budget is the sum of its parts, with DB_POOL_SIZE and DB_QUEUE_POOL_SIZE applied", () => {
  assert.equal(connectionBudget("server").total, 17);
  assert.equal(connectionBudget("worker").total, 11);
  const small = connectionBudget("server", { poolSize: 3, queuePoolSize: 1 });
  assert.equal(small.total, 7);
  assert.equal(
    describeBudget(small),
    "up to 7 database connections (pool 3, queue 1, job events 1, leader election 1, schedules 1)",
  );
});

test("room: beside what is in use now, or ever (a launcher's whole install)", () => {
  const room = { maxConnections: 100, reserved: 3, inUse: 90, free: 7 };
  assert.equal(roomProblem(room, 7, "this worker"), null);
  assert.match(
    roomProblem(room, 11, "this worker") ?? "",
    /this worker may open 11 .* only 7 of max_connections 100 are free \(90 in use, 3 reserved/,
  );
  assert.equal(roomProblem(room, 97, "this install", true), null);
  assert.match(roomProblem(room, 98, "this install", true) ?? "", /max_connections is 100 \(3 reserved/);
});
