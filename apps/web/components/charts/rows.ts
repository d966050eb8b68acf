/** Points of several series, each at its own x values, as one row per x (what recharts draws). */
export function mergeSeries<Point extends { at: number }>(
  series: { key: string; points: Point[] }[],
  value: (point: Point) => number | null,
): ({ x: number } & Record<string, number | null>)[] {
  const rows = new Map<number, { x: number } & Record<string, number | null>>();
  for (const { key, points } of series) {
    for (const point of points) {
      const row = rows.get(point.at) ?? { x: point.at };
      row[key] = value(point);
      rows.set(point.at, row);
    }
  }
  return [...rows.values()].sort((a, b) => a.x - b.x);
}
