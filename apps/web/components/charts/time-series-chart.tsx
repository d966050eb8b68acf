"use client";
import { useId, useState } from "react";
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { Button } from "@/components/ui/button";

/** One row per x value; a missing or null value is a gap. */
export type ChartRow = { x: number } & Record<string, number | null | undefined>;

export interface ChartSeries {
  key: string;
  label: string;
  /** A CSS colour; defaults to the palette by position. */
  colour?: string;
  /**
   * Draw across missing steps: for a sparse series (a figure per job started) whose points would
   * otherwise stand alone, unseen.
   */
  connectNulls?: boolean;
}

// Distinct in light and dark themes; the first four follow the theme's own status colours.
const PALETTE = [
  "var(--color-accent)",
  "var(--color-ok)",
  "var(--color-warn)",
  "var(--color-bad)",
  "#8b5cf6",
  "#06b6d4",
  "#ec4899",
  "#84cc16",
  "#f97316",
  "#64748b",
];

export const colourAt = (index: number) => PALETTE[index % PALETTE.length]!;

export interface TimeSeriesChartProps {
  title: string;
  /** One line under the title: what is measured, over what. */
  description?: string;
  rows: ChartRow[];
  series: ChartSeries[];
  kind?: "line" | "bar";
  /** How an x value reads (a clock time, seconds since the start …). */
  formatX: (x: number) => string;
  /** How a y value reads (a percentage, a duration …). */
  formatY?: (y: number) => string;
  xDomain?: [number, number];
  yDomain?: [number | "auto", number | "auto"];
  /** What an empty chart says instead. */
  emptyText?: string;
  testId?: string;
}

const plain = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(2));

/** Latest and peak value of each series: the chart's text alternative, said before the chart. */
function describe(rows: ChartRow[], series: ChartSeries[], formatY: (y: number) => string): string {
  const parts = series.map((s) => {
    const values = rows.map((row) => row[s.key]).filter((v): v is number => typeof v === "number");
    if (values.length === 0) return `${s.label}: no data`;
    return `${s.label}: latest ${formatY(values.at(-1)!)}, peak ${formatY(Math.max(...values))}`;
  });
  return `${rows.length} point${rows.length === 1 ? "" : "s"}. ${parts.join("; ")}.`;
}

/**
 * The one chart of the app's time series (the Workers page, the sizing simulator): a titled
 * figure whose summary (latest and peak per series) is read by screen readers, with a button that
 * shows the same points as a table.
 */
export function TimeSeriesChart({
  title,
  description,
  rows,
  series,
  kind = "line",
  formatX,
  formatY = plain,
  xDomain,
  yDomain = [0, "auto"],
  emptyText = "No data yet.",
  testId,
}: TimeSeriesChartProps) {
  const [table, setTable] = useState(false);
  const titleId = useId();
  const summary = describe(rows, series, formatY);
  const colour = (s: ChartSeries, i: number) => s.colour ?? colourAt(i);
  const axes = (
    <>
      <CartesianGrid stroke="var(--color-line)" strokeDasharray="3 3" vertical={false} />
      <XAxis
        dataKey="x"
        type="number"
        domain={xDomain ?? ["dataMin", "dataMax"]}
        tickFormatter={formatX}
        tick={{ fill: "var(--color-muted)", fontSize: 11 }}
        minTickGap={24}
        // Bars are centred on their x: leave room for the first and last.
        padding={kind === "bar" ? { left: 16, right: 16 } : undefined}
      />
      <YAxis
        width={56}
        domain={yDomain}
        tickFormatter={formatY}
        tick={{ fill: "var(--color-muted)", fontSize: 11 }}
        allowDecimals
      />
      <Tooltip
        labelFormatter={(x) => formatX(Number(x))}
        formatter={(value) => (typeof value === "number" ? formatY(value) : String(value))}
        contentStyle={{
          background: "var(--color-panel)",
          border: "1px solid var(--color-line)",
          color: "var(--color-fg)",
        }}
      />
      {/* Legend in the series' order, not recharts' default alphabetical one. */}
      {series.length > 1 && <Legend wrapperStyle={{ fontSize: 12 }} itemSorter={null} />}
    </>
  );
  // Recharts' own keyboard layer announces single points; the summary and the table say more.
  const chartProps = {
    data: rows,
    margin: { top: 4, right: 8, bottom: 0, left: 0 },
    accessibilityLayer: false,
  };
  return (
    <figure
      className="panel m-0 min-w-0"
      aria-labelledby={titleId}
      data-testid={testId}
      data-points={rows.length}
    >
      <div className="toolbar" style={{ marginBottom: "0.25rem" }}>
        <figcaption id={titleId} className="font-medium">
          {title}
        </figcaption>
        <Button size="sm" variant="ghost" aria-expanded={table} onClick={() => setTable((shown) => !shown)}>
          {table ? "Show chart" : "Show table"}
        </Button>
      </div>
      {description && <p className="m-0 mb-2 text-sm text-muted">{description}</p>}
      <p className="sr-only" data-testid={testId && `${testId}-summary`}>
        {summary}
      </p>
      {table ? (
        <div className="max-h-56 overflow-auto">
          <table aria-label={title}>
            <thead>
              <tr>
                <th scope="col">Time</th>
                {series.map((s) => (
                  <th key={s.key} scope="col">
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.x}>
                  <td>{formatX(row.x)}</td>
                  {series.map((s) => {
                    const value = row[s.key];
                    return <td key={s.key}>{typeof value === "number" ? formatY(value) : "–"}</td>;
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : rows.length === 0 ? (
        <div className="muted flex h-48 items-center justify-center">{emptyText}</div>
      ) : (
        // The chart keeps its old pixel width until its resize observer fires: clip it, so that a
        // narrowing window never scrolls the whole page sideways meanwhile.
        <div className="h-48 w-full overflow-hidden" aria-hidden>
          <ResponsiveContainer width="100%" height="100%">
            {kind === "bar" ? (
              <BarChart {...chartProps}>
                {axes}
                {series.map((s, i) => (
                  <Bar
                    key={s.key}
                    dataKey={s.key}
                    name={s.label}
                    fill={colour(s, i)}
                    isAnimationActive={false}
                  />
                ))}
              </BarChart>
            ) : (
              <LineChart {...chartProps}>
                {axes}
                {series.map((s, i) => (
                  <Line
                    key={s.key}
                    dataKey={s.key}
                    name={s.label}
                    stroke={colour(s, i)}
                    strokeWidth={2}
                    type="linear"
                    // A lone sample has no segment to draw: show it as a dot.
                    dot={rows.length < 3}
                    connectNulls={s.connectNulls ?? false}
                    isAnimationActive={false}
                  />
                ))}
              </LineChart>
            )}
          </ResponsiveContainer>
        </div>
      )}
    </figure>
  );
}
