// The must-show for schedules: three servers sharing one database run a schedule every
// 2 seconds for a minute, and every tick runs exactly once. The "servers" are three child
// processes running the same schedule ticker the web server runs (one is killed half-way, as a
// crashed server would be); a real worker runs the jobs.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createSchedule, deployScript, setScheduleEnabled, type Membership } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "./testing.ts";

const tickerScript = path.join(
  path.dirname(fileURLToPath(import.meta.resolve("@millrace/core"))),
  "schedules",
  "testing-ticker.ts",
);
const RUN_MS = 60_000;
const PERIOD_MS = 2000;

interface Ticker {
  name: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<void>;
}

async function startTicker(databaseUrl: string, name: string): Promise<Ticker> {
  let output = "";
  const child = spawn(process.execPath, [tickerScript], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", DATABASE_URL: databaseUrl, TICKER_NAME: name },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const deadline = Date.now() + 20_000;
  while (!output.includes("ticker ready")) {
    if (child.exitCode !== null) throw new Error(`${name} exited early:\n${output}`);
    if (Date.now() > deadline) throw new Error(`${name} did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { name, child, output: () => output, exited };
}

function signal(ticker: Ticker, name: NodeJS.Signals): void {
  try {
    process.kill(-ticker.child.pid!, name);
  } catch {
    // already gone
  }
}

let services: TestServices;
let membership: Membership;
let worker: TestWorker;
const tickers: Ticker[] = [];

describe("schedules across servers", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "multi"));
    worker = await startTestWorker(services.database.url, { NUM_WORKERS: "2" });
    for (const name of ["server-a", "server-b", "server-c"]) {
      tickers.push(await startTicker(services.database.url, name));
    }
  });
  after(async () => {
    for (const ticker of tickers) {
      signal(ticker, "SIGTERM");
      const timer = setTimeout(() => signal(ticker, "SIGKILL"), 5000);
      await ticker.exited;
      clearTimeout(timer);
    }
    await worker?.stop();
    await services?.close();
  });

  it("three servers run a 2-second schedule for a minute: every tick exactly once, no gaps", async () => {
    const me = membership.principal.username;
    await deployScript(services, membership, {
      path: `u/${me}/beat`,
      language: "bash",
      content: 'n="$1"\necho "beat $n"',
    });
    const schedule = await createSchedule(services, membership, {
      path: `u/${me}/every-two-seconds`,
      schedule: "*/2 * * * * *",
      timezone: "UTC",
      scriptPath: `u/${me}/beat`,
      args: { n: "1" },
    });
    const firstTick = schedule.nextRunAt!.getTime();

    // Half-way, one server dies without a word (SIGKILL): the other two carry on.
    await new Promise((resolve) => setTimeout(resolve, RUN_MS / 2));
    signal(tickers[0]!, "SIGKILL");
    await tickers[0]!.exited;
    await new Promise((resolve) => setTimeout(resolve, RUN_MS / 2));
    await setScheduleEnabled(services, membership, schedule.path, false);
    const stoppedAt = Date.now();

    const { rows } = await services.pool.query<{ at: Date }>(
      `SELECT scheduled_for AT TIME ZONE 'UTC' AS at FROM job WHERE workspace_id = 'multi' AND schedule_path = $1
        ORDER BY scheduled_for`,
      [schedule.path],
    );
    const ticks = rows.map((row) => row.at.getTime());
    const expected = Math.floor((stoppedAt - firstTick) / PERIOD_MS) + 1;
    assert.ok(ticks.length >= 29, `a minute at one tick per 2 s: got ${ticks.length} ticks`);
    assert.ok(Math.abs(ticks.length - expected) <= 1, `expected ${expected} ticks, got ${ticks.length}`);
    assert.equal(ticks[0], firstTick, "the first tick ran");
    assert.equal(new Set(ticks).size, ticks.length, "no tick ran twice");
    for (let i = 1; i < ticks.length; i++) {
      assert.equal(
        ticks[i]! - ticks[i - 1]!,
        PERIOD_MS,
        `gap after ${new Date(ticks[i - 1]!).toISOString()}`,
      );
    }
    const byServer = tickers.map((t) => `${t.name}: ${t.output().match(/ ran /g)?.length ?? 0}`);
    console.log(`ticks run per server: ${byServer.join(", ")}`);

    // Every tick's job really ran (the worker finishes the last ones within seconds).
    const deadline = Date.now() + 20_000;
    let statuses: string[] = [];
    while (Date.now() < deadline) {
      const result = await services.pool.query<{ status: string }>(
        "SELECT status::text FROM job WHERE workspace_id = 'multi' AND schedule_path = $1",
        [schedule.path],
      );
      statuses = result.rows.map((row) => row.status);
      if (statuses.every((status) => status === "success")) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.equal(statuses.length, ticks.length);
    assert.deepEqual(
      statuses.filter((status) => status !== "success"),
      [],
      "every scheduled job succeeded",
    );
  });
});
