import os from "node:os";

export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

export function summary(samples: number[]): { p50: number; p95: number; mean: number; n: number } {
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  return { p50: percentile(samples, 50), p95: percentile(samples, 95), mean, n: samples.length };
}

export const ms = (value: number) => `${value.toFixed(1)} ms`;

/**
 * CPU time the whole machine has spent busy (all cores, ms). The difference over a series,
 * divided by its requests, is what one request costs the machine, every process included; a
 * series whose requests follow each other cannot go faster than that cost over the cores.
 */
export function machineBusyMs(): number {
  return os.cpus().reduce((sum, { times }) => sum + times.user + times.nice + times.sys + times.irq, 0);
}

/** Runs `series` and returns its result with the machine's busy CPU per request (ms). */
export async function withCpuPerRequest<T>(
  requests: number,
  series: () => Promise<T>,
): Promise<{ result: T; cpuPerRequest: number }> {
  const before = machineBusyMs();
  const result = await series();
  return { result, cpuPerRequest: (machineBusyMs() - before) / requests };
}
