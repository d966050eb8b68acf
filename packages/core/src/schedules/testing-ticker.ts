// A stand-in for one server's schedule ticker, run as a child process by the integration tests
// (several of them against one database play the part of several servers). It runs the same
// startScheduleTicker the web server runs; SIGTERM stops it cleanly, SIGKILL plays a crash.
import { createDb, createPool } from "@millrace/db";
import { startBoss } from "../jobs/boss.ts";
import { JobEvents } from "../jobs/events.ts";
import { startScheduleTicker } from "./ticker.ts";

// eslint-disable-next-line no-restricted-properties
const databaseUrl = process.env.DATABASE_URL;
// eslint-disable-next-line no-restricted-properties
const name = process.env.TICKER_NAME ?? `ticker-${process.pid}`;
if (!databaseUrl) {
  console.error("DATABASE_URL is required");
  process.exit(2);
}

const pool = createPool(databaseUrl, { max: 4, applicationName: name });
const boss = await startBoss(databaseUrl, "worker");
const events = new JobEvents(databaseUrl);
const ctx = {
  db: createDb(pool),
  pool,
  boss,
  events,
  limits: { defaultTimeoutSecs: 60, maxTimeoutSecs: 3600 },
};
const ticker = startScheduleTicker(ctx, databaseUrl, {
  log: (message) => console.log(`[${name}] ${message}`),
  onTick: (outcome) => console.log(`[${name}] ran ${outcome.path} for ${outcome.tick.toISOString()}`),
});
console.log(`[${name}] ticker ready`);

process.once("SIGTERM", () => {
  void (async () => {
    await ticker.stop();
    await boss.stop({ graceful: false, close: true, timeout: 2000 }).catch(() => {});
    await pool.end();
    process.exit(0);
  })();
});
