/** A job's or step's status as a coloured badge (the `status-<status>` classes of globals.css). */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`status status-${status}`}>{status}</span>;
}
