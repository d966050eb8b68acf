"use client";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { mergeSeries } from "@/components/charts/rows";
import { TimeSeriesChart } from "@/components/charts/time-series-chart";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { duration } from "./worker-tables";

const WINDOWS = [
  { minutes: 5, label: "Last 5 minutes" },
  { minutes: 15, label: "Last 15 minutes" },
  { minutes: 60, label: "Last hour" },
] as const;
type WindowMinutes = (typeof WINDOWS)[number]["minutes"];

const REFRESH_MS = 15_000;

const clock = (ms: number) => new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
const clockSecs = (ms: number) =>
  new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const percent = (ratio: number) => `${Math.round(ratio * 100)}%`;
const count = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));

/**
 * The fleet over the last minutes, from the leader's samples and the completed jobs: occupancy of
 * each worker group (15 s / 5 min / 30 min windows), queue depth and oldest wait per tag, and jobs
 * and failures per minute.
 */
export function FleetCharts() {
  const trpc = useTRPC();
  const [minutes, setMinutes] = useState<WindowMinutes>(60);
  const history = useQuery({
    ...trpc.fleet.history.queryOptions({ minutes }),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.error ? false : REFRESH_MS),
  });
  const data = history.data;
  const formatX = minutes > 15 ? clock : clockSecs;
  const xDomain: [number, number] | undefined = data && [data.from, data.to];
  const tagSeries = (data?.tags ?? []).map((t, i) => ({ key: `s${i}`, label: t.tag, points: t.points }));

  return (
    <section aria-labelledby="fleet-heading" className="stack" style={{ marginBottom: "1rem" }}>
      <div className="toolbar" style={{ marginBottom: 0 }}>
        <h2 id="fleet-heading" style={{ margin: 0 }}>
          Fleet
        </h2>
        <label className="row items-center">
          <span className="sr-only">Time window</span>
          <select
            aria-label="Time window"
            value={minutes}
            onChange={(e) => setMinutes(Number(e.target.value) as WindowMinutes)}
          >
            {WINDOWS.map((w) => (
              <option key={w.minutes} value={w.minutes}>
                {w.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      {history.error && <div className="error">{errorMessage(history.error)}</div>}
      {data && (
        <div className="grid gap-3 lg:grid-cols-2" data-testid="fleet-charts">
          {data.groups.map((group) => (
            <TimeSeriesChart
              key={group.workerGroup}
              testId={`occupancy-${group.workerGroup}`}
              title={`Occupancy of group ${group.workerGroup}`}
              description="Share of time its live workers spent running jobs, averaged over 15 s, 5 min and 30 min."
              rows={group.points.map((p) => ({
                x: p.at,
                o15: p.occupancy15s,
                o5: p.occupancy5m,
                o30: p.occupancy30m,
              }))}
              series={[
                { key: "o15", label: "15 s" },
                { key: "o5", label: "5 min" },
                { key: "o30", label: "30 min" },
              ]}
              formatX={formatX}
              formatY={percent}
              xDomain={xDomain}
              yDomain={[0, 1]}
            />
          ))}
          {data.groups.length === 0 && (
            <div className="panel empty">No worker group was sampled in this window.</div>
          )}
          <TimeSeriesChart
            testId="queue-depth"
            title="Queue depth per tag"
            description="Jobs due and waiting for a worker (the most seen in each step)."
            rows={mergeSeries(tagSeries, (p) => p.queued)}
            emptyText="No job waited or ran in this window."
            series={tagSeries}
            formatX={formatX}
            formatY={count}
            xDomain={xDomain}
          />
          <TimeSeriesChart
            testId="oldest-wait"
            title="Oldest wait per tag"
            description="How long the longest-waiting due job of each tag had waited."
            rows={mergeSeries(tagSeries, (p) => p.oldestWaitSecs)}
            emptyText="No job waited or ran in this window."
            series={tagSeries}
            formatX={formatX}
            formatY={(secs) => duration(Math.round(secs))}
            xDomain={xDomain}
          />
          <TimeSeriesChart
            testId="throughput"
            kind="bar"
            title="Jobs per minute"
            description="Jobs workers completed each minute, and how many of them failed."
            rows={data.throughput.map((p) => ({ x: p.at, completed: p.completed, failed: p.failed }))}
            series={[
              { key: "completed", label: "Completed", colour: "var(--color-ok)" },
              { key: "failed", label: "Failed", colour: "var(--color-bad)" },
            ]}
            formatX={clock}
            formatY={count}
          />
        </div>
      )}
      {data && (data.groupsLeftOut > 0 || data.tagsLeftOut > 0) && (
        <p className="muted text-sm">
          Showing the busiest groups and tags: {data.groupsLeftOut} group(s) and {data.tagsLeftOut} tag(s)
          left out.
        </p>
      )}
    </section>
  );
}
