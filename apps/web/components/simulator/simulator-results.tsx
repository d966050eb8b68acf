"use client";
import type { SimulationResult } from "@millrace/core/fleet-model";
import { TimeSeriesChart } from "@/components/charts/time-series-chart";

/** Seconds as the simulator shows them: one decimal below a minute, then minutes and hours. */
export function formatSecs(secs: number): string {
  if (secs < 60) return `${secs.toFixed(secs < 10 ? 2 : 1)} s`;
  if (secs < 3600) return `${Math.floor(secs / 60)} min ${Math.round(secs % 60)} s`;
  return `${Math.floor(secs / 3600)} h ${Math.round((secs % 3600) / 60)} min`;
}
const axisSecs = (secs: number) => (secs < 120 ? `${Number(secs.toFixed(1))} s` : formatSecs(secs));
const percent = (ratio: number) => `${(ratio * 100).toFixed(1)} %`;
const count = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));

function Figure({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="panel m-0">
      <dt className="muted text-sm">{label}</dt>
      <dd className="m-0 text-lg font-medium" data-testid={testId}>
        {value}
      </dd>
    </div>
  );
}

/** The run's key figures (the seed's "elapsed time, jobs/sec, worker occupancy") and its charts. */
export function SimulatorResults({ result, autoscaled }: { result: SimulationResult; autoscaled: boolean }) {
  const { summary, points } = result;
  const rows = points.map((p) => ({
    x: p.t,
    queued: p.queued,
    wait: p.waitSecs,
    occupancy: p.occupancy,
    workers: p.workers,
  }));
  const xDomain: [number, number] = [0, summary.drainSecs];
  return (
    <section aria-labelledby="results-heading" className="stack">
      <h2 id="results-heading">Result</h2>
      <dl className="m-0 grid grid-cols-2 gap-3 md:grid-cols-4" data-testid="simulation-summary">
        <Figure label="Jobs" value={summary.jobs.toLocaleString()} testId="sim-jobs" />
        <Figure
          label="Drain time (first job to last completion)"
          value={formatSecs(summary.drainSecs)}
          testId="sim-drain"
        />
        <Figure label="Mean occupancy" value={percent(summary.meanOccupancy)} testId="sim-occupancy" />
        <Figure label="Throughput" value={`${count(summary.throughput)} jobs/s`} testId="sim-throughput" />
        <Figure label="Mean wait" value={formatSecs(summary.meanWaitSecs)} testId="sim-mean-wait" />
        <Figure label="95th percentile wait" value={formatSecs(summary.p95WaitSecs)} testId="sim-p95-wait" />
        <Figure label="Longest wait" value={formatSecs(summary.maxWaitSecs)} testId="sim-max-wait" />
        <Figure
          label={autoscaled ? "Peak workers (scaling events)" : "Workers"}
          value={
            autoscaled ? `${summary.peakWorkers} (${summary.scalingEvents})` : String(summary.peakWorkers)
          }
          testId="sim-workers"
        />
      </dl>
      <div className="grid gap-3 lg:grid-cols-2">
        <TimeSeriesChart
          testId="sim-queue"
          title="Queue depth"
          description={`Jobs waiting, averaged over steps of ${axisSecs(result.stepSecs)}.`}
          rows={rows}
          series={[{ key: "queued", label: "Waiting jobs" }]}
          formatX={axisSecs}
          formatY={count}
          xDomain={xDomain}
        />
        <TimeSeriesChart
          testId="sim-wait"
          title="Wait time"
          description="Mean wait of the jobs that started in each step."
          rows={rows}
          series={[{ key: "wait", label: "Mean wait", colour: "var(--color-warn)", connectNulls: true }]}
          formatX={axisSecs}
          formatY={axisSecs}
          xDomain={xDomain}
        />
        <TimeSeriesChart
          testId="sim-occupancy-chart"
          title="Occupancy"
          description="Busy worker time over live worker time in each step."
          rows={rows}
          series={[{ key: "occupancy", label: "Occupancy", colour: "var(--color-ok)" }]}
          formatX={axisSecs}
          formatY={(ratio) => `${Math.round(ratio * 100)}%`}
          xDomain={xDomain}
          yDomain={[0, 1]}
        />
        {autoscaled && (
          <TimeSeriesChart
            testId="sim-workers-chart"
            title="Live workers"
            description="Workers the autoscaler kept, averaged over each step."
            rows={rows}
            series={[{ key: "workers", label: "Workers" }]}
            formatX={axisSecs}
            formatY={count}
            xDomain={xDomain}
          />
        )}
      </div>
    </section>
  );
}
