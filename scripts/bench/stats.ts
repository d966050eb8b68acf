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
