import type { ClaimedJob } from "@millrace/core";

// Weight of the newest run in the moving average.
const ALPHA = 0.3;
// Runs seen before a script's duration is trusted for predictions.
const MIN_SAMPLES = 3;

/**
 * How long this worker's recent jobs of each script took (moving average), to predict when a busy
 * slot will be free. Kept per worker process: it is only a scheduling hint.
 */
export class JobDurations {
  private readonly byKey = new Map<string, { mean: number; samples: number }>();

  private static key(job: ClaimedJob): string {
    return job.scriptPath ? `${job.workspaceId}:${job.scriptPath}` : `${job.kind}:${job.tag}`;
  }

  record(job: ClaimedJob, ms: number): void {
    const key = JobDurations.key(job);
    const seen = this.byKey.get(key);
    if (!seen) this.byKey.set(key, { mean: ms, samples: 1 });
    else {
      seen.mean += ALPHA * (ms - seen.mean);
      seen.samples++;
    }
    // Bounded: a worker serving thousands of distinct scripts keeps the recent ones.
    if (this.byKey.size > 10_000) this.byKey.delete(this.byKey.keys().next().value!);
  }

  /** The expected duration of `job` in ms, or null when this worker has not seen enough runs. */
  expected(job: ClaimedJob): number | null {
    const seen = this.byKey.get(JobDurations.key(job));
    return seen && seen.samples >= MIN_SAMPLES ? seen.mean : null;
  }
}
