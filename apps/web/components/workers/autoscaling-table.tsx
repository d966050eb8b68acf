"use client";
import { useQuery } from "@tanstack/react-query";
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
      {events.length > 0 && (
        <div className="overflow-x-auto">
          <table aria-label="Autoscaling decisions">
            <thead>
              <tr>
                <th>When</th>
                <th>Group</th>
                <th>Decision</th>
                <th>Workers</th>
                <th>Why</th>
                <th>Integration</th>
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr key={event.id} data-testid="autoscaling-event">
                  <td title={event.at}>{new Date(event.at).toLocaleString()}</td>
                  <td>
                    <code>{event.group}</code>
                  </td>
                  <td>{event.eventType.replace("_", " ")}</td>
                  <td>
                    {event.from} → {event.to}
                  </td>
                  <td>{event.reason}</td>
                  <td>
                    {event.integration}
                    {event.error && <span className="field-error"> failed: {event.error}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
