// Seeded randomness for the sizing simulator. The same seed gives the same arrivals and durations
// on every machine and in the browser, so an operator and a test see the same run.

/** Uniform numbers in [0, 1). */
export type Random = () => number;

/**
 * sfc32 seeded through splitmix32: small, fast, and good enough for queueing statistics (a long
 * M/M/c run matches Erlang C within a percent, see simulator.test.ts). Math.random has no seed.
 */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const splitmix = () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix();
  let b = splitmix();
  let c = splitmix();
  let d = splitmix();
  const next = () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  // The first outputs of a fresh state are weakly mixed.
  for (let i = 0; i < 12; i++) next();
  return next;
}

/** An exponentially distributed draw with this mean (inverse transform; 1 - u avoids log(0)). */
export function exponential(random: Random, mean: number): number {
  return -Math.log(1 - random()) * mean;
}

export type DurationDistribution =
  | { kind: "fixed"; secs: number }
  | { kind: "exponential"; meanSecs: number }
  | { kind: "uniform"; minSecs: number; maxSecs: number };

export function drawDuration(distribution: DurationDistribution, random: Random): number {
  switch (distribution.kind) {
    case "fixed":
      return distribution.secs;
    case "exponential":
      return exponential(random, distribution.meanSecs);
    case "uniform":
      return distribution.minSecs + random() * (distribution.maxSecs - distribution.minSecs);
  }
}

export function meanDuration(distribution: DurationDistribution): number {
  switch (distribution.kind) {
    case "fixed":
      return distribution.secs;
    case "exponential":
      return distribution.meanSecs;
    case "uniform":
      return (distribution.minSecs + distribution.maxSecs) / 2;
  }
}
