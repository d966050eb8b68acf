"use client";
import { useRouter } from "next/navigation";
import { Bar, BarChart, Cell, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatDuration } from "./duration";

export type ChartRun = {
  id: string;
  scriptPath: string | null;
  status: string;
  createdAt: string;
  /** Seconds; null while queued. */
  duration: number | null;
};

const STATUS_COLOUR: Record<string, string> = {
  success: "var(--color-ok)",
  failure: "var(--color-bad)",
  canceled: "var(--color-muted)",
  running: "var(--color-accent)",
  queued: "var(--color-warn)",
};

/**
 * The runs of the page, oldest first: one bar each, its height the run's duration and its colour
 * its status. Clicking a bar opens the run. (The table below lists the same runs for keyboards
 * and screen readers.)
 */
export function RunsChart({ workspace, runs }: { workspace: string; runs: ChartRun[] }) {
  const router = useRouter();
  const data = [...runs].reverse().map((run) => ({ ...run, seconds: run.duration ?? 0 }));
  return (
    <figure className="panel m-0" data-testid="runs-chart" aria-label="Durations and statuses of these runs">
      <figcaption className="mb-2 text-sm text-muted">
        Duration and status of the {runs.length} runs listed, oldest first. Click a bar to open its run.
      </figcaption>
      <div className="h-40 w-full">
        <ResponsiveContainer width="100%" height="100%">
          <BarChart data={data} margin={{ top: 4, right: 4, bottom: 0, left: 0 }} accessibilityLayer={false}>
            <XAxis dataKey="id" hide />
            <YAxis
              width={52}
              tick={{ fill: "var(--color-muted)", fontSize: 11 }}
              tickFormatter={(value: number) => formatDuration(value)}
            />
            <Tooltip
              cursor={{ fill: "var(--color-hover)" }}
              contentStyle={{
                background: "var(--color-panel)",
                border: "1px solid var(--color-line)",
                color: "var(--color-fg)",
              }}
              labelFormatter={(_, payload) => {
                const run = payload?.[0]?.payload as ChartRun | undefined;
                return run
                  ? `${run.scriptPath ?? "preview"} · ${new Date(run.createdAt).toLocaleString()}`
                  : "";
              }}
              formatter={(_value, _name, item) => {
                const run = item.payload as ChartRun;
                return [run.duration === null ? "not started" : formatDuration(run.duration), run.status];
              }}
            />
            <Bar
              dataKey="seconds"
              minPointSize={3}
              isAnimationActive={false}
              cursor="pointer"
              onClick={(entry: { payload?: ChartRun }) => {
                if (entry.payload) router.push(`/w/${workspace}/runs/${entry.payload.id}`);
              }}
            >
              {data.map((run) => (
                <Cell
                  key={run.id}
                  fill={STATUS_COLOUR[run.status] ?? "var(--color-muted)"}
                  data-status={run.status}
                />
              ))}
            </Bar>
          </BarChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
