// Seed 004's recommended starting values for autoscaling:
//   | Min workers | Expected base load / job duration |
//   | Max workers | Peak load / job duration × 1.5    |
// Read with load as an arrival rate (jobs/s) and duration in seconds, "/" would give jobs/s²,
// not workers. The same seed states the relationship it rests on ("Required workers ≥ Job arrival
// rate × Average job duration") and every worked example multiplies (10 jobs/s × 2 s = 20
// workers; 1.67/s × 5 s = 8.3). So the load is taken as the work it brings, rate × duration,
// which the table then divides by one worker's capacity: min = base rate × mean duration,
// max = peak rate × mean duration × 1.5, rounded up as the seed does ("4.2 → 5 workers").

export interface SizingInput {
  /** Jobs per second under normal load. */
  baseRatePerSec: number;
  /** Jobs per second at the peak. */
  peakRatePerSec: number;
  meanDurationSecs: number;
}

export interface SizingRecommendation {
  /** Workers the base load keeps busy (before rounding up). */
  baseWorkers: number;
  /** Workers the peak keeps busy, with the seed's 1.5 headroom (before rounding up). */
  peakWorkersWithHeadroom: number;
  min: number;
  max: number;
}

export const PEAK_HEADROOM = 1.5;

// 2 × 1.5 is 3.0000000000000004 in floating point: that is 3 workers, not 4.
const roundUp = (value: number) => Math.ceil(value - 1e-9);

export function recommendWorkers(input: SizingInput): SizingRecommendation {
  const baseWorkers = Math.max(0, input.baseRatePerSec) * Math.max(0, input.meanDurationSecs);
  const peakRate = Math.max(input.baseRatePerSec, input.peakRatePerSec, 0);
  const peakWorkersWithHeadroom = peakRate * Math.max(0, input.meanDurationSecs) * PEAK_HEADROOM;
  const min = Math.max(1, roundUp(baseWorkers));
  return { baseWorkers, peakWorkersWithHeadroom, min, max: Math.max(min, roundUp(peakWorkersWithHeadroom)) };
}
