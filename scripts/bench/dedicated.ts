// Dedicated worker figures: one worker process with DEDICATED_WORKER serving a trivial script from a
// warm process, against the bench instance's server.
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { WarmProcess, type WarmLanguage } from "@millrace/runtime";
import { startTestWorker } from "../../apps/worker/src/testing.ts";
import type { BenchInstance } from "./instance.ts";
import { summary } from "./stats.ts";

const SCRIPTS: Record<WarmLanguage, string> = {
  bun: "export function main(i: number) {\n  return i;\n}\n",
  python3: "def main(i: int):\n    return i\n",
};

type Summary = ReturnType<typeof summary>;

export interface DedicatedFigures {
  language: WarmLanguage;
  /** POST run_wait_result to the answer (HTTP, server, queue, worker, warm process). */
  submitToResult: Summary;
  /** The worker's share: claim to completion (the job row's started_at → completed_at). */
  workerTime: Summary;
  /** A job's round trip to the warm process alone (stdin → main → stdout), measured in this process. */
  warmRoundTrip: Summary;
  /** workerTime p50 minus warmRoundTrip p50: what Millrace adds per job on a warm process. */
  overheadP50: number;
}

async function warmRoundTrips(language: WarmLanguage, runs: number): Promise<number[]> {
  const proc = await WarmProcess.start({
    language,
    content: SCRIPTS[language],
    dir: path.join(os.tmpdir(), `millrace-bench-warm-${process.pid}-${language}`),
    env: {},
  });
  const samples: number[] = [];
  try {
    for (let i = 0; i < runs + 20; i++) {
      const started = performance.now();
      await proc.run({
        args: { i },
        argOrder: ["i"],
        env: { WM_JOB_ID: `bench-${i}` },
        timeoutMs: 10_000,
        onLog() {},
      });
      if (i >= 20) samples.push(performance.now() - started);
    }
  } finally {
    await proc.close();
  }
  return samples;
}

export async function dedicatedBench(
  instance: BenchInstance,
  language: WarmLanguage,
  runs: number,
): Promise<DedicatedFigures> {
  const headers = { Authorization: `Bearer ${instance.userToken}`, "content-type": "application/json" };
  const api = (p: string, body: unknown) =>
    fetch(`${instance.baseUrl}/api${p}`, { method: "POST", headers, body: JSON.stringify(body) });
  const scriptPath = `u/bench/dedicated_${language}`;
  const created = await api("/w/bench/scripts/create", {
    path: scriptPath,
    language,
    summary: "",
    content: SCRIPTS[language],
  });
  if (!created.ok) throw new Error(`deploy failed: ${await created.text()}`);
  const worker = await startTestWorker(instance.databaseUrl, {
    DEDICATED_WORKER: `bench:${scriptPath}`,
    NUM_WORKERS: "1",
    BASE_URL: instance.baseUrl,
  });
  const db = new pg.Client({ connectionString: instance.databaseUrl });
  await db.connect();
  try {
    const run = async (i: number) => {
      const response = await api(`/w/bench/jobs/run_wait_result/p/${scriptPath}`, { i });
      const result = await response.json();
      if (result !== i) throw new Error(`unexpected result ${JSON.stringify(result)}`);
    };
    // Until the server routes the script to the dedicated worker (it sees the worker's ping).
    const tag = `bench/${scriptPath}`;
    const deadline = Date.now() + 30_000;
    for (let i = 0; ; i++) {
      await run(i);
      const { rows } = await db.query<{ tag: string }>(
        "SELECT tag FROM job WHERE script_path = $1 ORDER BY created_at DESC LIMIT 1",
        [scriptPath],
      );
      if (rows[0]?.tag === tag && i >= 20) break;
      if (Date.now() > deadline) throw new Error("jobs never reached the dedicated worker");
      await new Promise((resolve) => setTimeout(resolve, rows[0]?.tag === tag ? 0 : 200));
    }
    const since = new Date();
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      await run(i);
      samples.push(performance.now() - started);
    }
    const { rows } = await db.query<{ ms: number }>(
      `SELECT extract(epoch FROM completed_at - started_at) * 1000 AS ms FROM job
        WHERE script_path = $1 AND tag = $2 AND created_at >= $3 AND status = 'success'`,
      [scriptPath, tag, since],
    );
    const workerTime = summary(rows.map((row) => Number(row.ms)));
    const warmRoundTrip = summary(await warmRoundTrips(language, runs));
    return {
      language,
      submitToResult: summary(samples),
      workerTime,
      warmRoundTrip,
      overheadP50: workerTime.p50 - warmRoundTrip.p50,
    };
  } finally {
    await db.end();
    await worker.stop();
  }
}
