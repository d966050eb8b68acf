import { PgBoss } from "pg-boss";
import { summary } from "./stats.ts";

/**
 * pg-boss on its own, on the same database: the latency from `send()` to the handler starting,
 * with pg-boss's own `work()` loop, polling at its minimum interval and woken by LISTEN/NOTIFY.
 */
export async function rawPgBossLatency(databaseUrl: string, runs: { polling: number; notify: number }) {
  const boss = new PgBoss({
    connectionString: databaseUrl,
    useListenNotify: true,
    supervise: false,
    schedule: false,
  });
  boss.on("error", () => {});
  await boss.start();
  const results: Record<string, ReturnType<typeof summary>> = {};
  for (const mode of ["polling", "notify"] as const) {
    const queue = `bench_raw_${mode}`;
    await boss.createQueue(queue, mode === "notify" ? { notify: true } : {});
    let resolveNext: ((at: number) => void) | null = null;
    await boss.work(queue, { pollingIntervalSeconds: 0.5, batchSize: 1 }, async () => {
      resolveNext?.(performance.now());
    });
    const samples: number[] = [];
    for (let i = 0; i < runs[mode]; i++) {
      const handled = new Promise<number>((resolve) => (resolveNext = resolve));
      const sentAt = performance.now();
      await boss.send(queue, { i });
      samples.push((await handled) - sentAt);
    }
    await boss.offWork(queue);
    results[mode] = summary(samples);
  }
  await boss.stop({ graceful: false, timeout: 2000 });
  return results as { polling: ReturnType<typeof summary>; notify: ReturnType<typeof summary> };
}
