"use client";
import { useQuery } from "@tanstack/react-query";
import { DataTable } from "@/components/data-table";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

const REFRESH_MS = 5000;

/** Superadmins: each autoscaled group's desired count, and every decision (from, to, why). */
export function AutoscalingTable() {
  const trpc = useTRPC();
  const autoscaling = useQuery({ ...trpc.worker.autoscaling.queryOptions(), refetchInterval: REFRESH_MS });
  if (autoscaling.error) return <div className="error">{errorMessage(autoscaling.error)}</div>;
  if (!autoscaling.data) return null;
  const { groups, events } = autoscaling.data;
  if (groups.length === 0 && events.length === 0) {
    return (
      <div className="panel empty">
        No worker group is autoscaled: enable autoscaling in a group&apos;s config.
      </div>
    );
  }
  return (
    <div className="panel stack">
      <div data-testid="autoscaling-groups">
        {groups.map((group) => (
          <span key={group.group} style={{ marginRight: "1rem" }}>
            <code>{group.group}</code>: {group.desired} worker{group.desired === 1 ? "" : "s"} wanted
            {group.error && <span className="field-error"> (the integration failed: {group.error})</span>}
          </span>
        ))}
      </div>
      <DataTable
        query={{ data: events }}
        label="Autoscaling decisions"
        rowKey={(event) => event.id}
        rowProps={() => ({ "data-testid": "autoscaling-event" })}
        columns={[
          {
            header: "When",
            cellProps: (event) => ({ title: event.at }),
            cell: (event) => new Date(event.at).toLocaleString(),
          },
          { header: "Group", cell: (event) => <code>{event.group}</code> },
          { header: "Decision", cell: (event) => event.eventType.replace("_", " ") },
          {
            header: "Workers",
            cell: (event) => (
              <>
                {event.from} → {event.to}
              </>
            ),
          },
          { header: "Why", cell: (event) => event.reason },
          {
            header: "Integration",
            cell: (event) => (
              <>
                {event.integration}
                {event.error && <span className="field-error"> failed: {event.error}</span>}
              </>
            ),
          },
        ]}
      />
    </div>
  );
}
