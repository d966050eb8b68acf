/**
 * The one timer that samples every running job of the process (memory, tasks, disk), instead of a
 * timer per job and per watch. On these VMs a wake-up of an idle process costs ~80 µs of CPU
 * before it does anything (cold caches, the hypervisor's wake), more than the /proc reads of a
 * sample: with 8 jobs running, per-job timers woke the worker 240 times a second, this one 20
 * times. A job's first sample therefore comes at most SAMPLE_TICK_MS after it started, rather than
 * exactly then; each watch keeps its own pace on top (see watchDisk).
 *
 * The timer runs only while something is watched: an idle worker is not woken by it.
 */
export const SAMPLE_TICK_MS = 50;

type Sampler = (now: number) => void;

const samplers = new Set<Sampler>();
let timer: NodeJS.Timeout | null = null;

function tick(): void {
  const now = performance.now();
  // A sampler may stop itself or another one (a kill ends its job): iterate over a copy.
  for (const sampler of [...samplers]) if (samplers.has(sampler)) sampler(now);
}

/**
 * Whether a watch that paces itself (samples no more often than it wants) should sample at the
 * tick of `now`, its next sample being due at `dueAt`: ticks come about SAMPLE_TICK_MS apart, and
 * half a tick's slack keeps the pace rather than slipping a whole tick each time.
 */
export function sampleDue(now: number, dueAt: number): boolean {
  return now >= dueAt - SAMPLE_TICK_MS / 2;
}

/** Calls `sampler` at every tick until the returned function is called. */
export function onSampleTick(sampler: Sampler): () => void {
  samplers.add(sampler);
  timer ??= setInterval(tick, SAMPLE_TICK_MS);
  return () => {
    samplers.delete(sampler);
    if (samplers.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
}
