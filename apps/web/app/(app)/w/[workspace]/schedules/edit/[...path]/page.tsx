"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { use } from "react";
import { StatusBadge } from "@/components/job-view";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { ScheduleForm } from "../../schedule-form";

const REFRESH_MS = 3000;

function when(iso: string | null): string {
  return iso ? new Date(iso).toLocaleString() : "—";
}

export default function EditSchedulePage({
  params,
}: {
  params: Promise<{ workspace: string; path: string[] }>;
}) {
  const { workspace, path: segments } = use(params);
  const path = segments.map(decodeURIComponent).join("/");
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const schedule = useQuery({
    ...trpc.schedule.get.queryOptions({ workspace, path }),
    refetchInterval: REFRESH_MS,
  });
  const refresh = () => queryClient.invalidateQueries(trpc.schedule.pathFilter());
  const toggle = useMutation(trpc.schedule.setEnabled.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(
    trpc.schedule.delete.mutationOptions({
      onSuccess: async () => {
        await refresh();
        router.push(`/w/${workspace}/schedules`);
      },
    }),
  );
  const data = schedule.data;
  return (
    <div>
      <div className="toolbar">
        <h1>Schedule {path}</h1>
        <Link href={`/w/${workspace}/schedules`}>Back to schedules</Link>
      </div>
      {schedule.error && <div className="error">{errorMessage(schedule.error)}</div>}
      {(toggle.error ?? remove.error) && (
        <div className="error">{errorMessage(toggle.error ?? remove.error)}</div>
      )}
      {data && (
        <div className="stack">
          <div className="panel row" style={{ alignItems: "center" }}>
            <label style={{ flexDirection: "row", alignItems: "center" }}>
              <input
                type="checkbox"
                name="enabled"
                checked={data.enabled}
                disabled={toggle.isPending}
                onChange={(e) => toggle.mutate({ workspace, path, enabled: e.target.checked })}
              />
              Enabled
            </label>
            <span className="muted" data-testid="next-run">
              {data.enabled ? `Next run: ${when(data.nextRunAt)}` : "Paused: no runs until enabled again"}
            </span>
            <span className="muted">Runs as {data.permissionedAs}</span>
            <button
              type="button"
              disabled={remove.isPending}
              onClick={() => {
                if (window.confirm(`Delete schedule ${path}? Its past runs stay.`)) {
                  remove.mutate({ workspace, path });
                }
              }}
            >
              Delete
            </button>
          </div>
          {data.error && (
            <div className="error" data-testid="schedule-error">
              Last tick could not start a job: {data.error}
            </div>
          )}

          <h2>Last runs</h2>
          {data.runs.length === 0 ? (
            <div className="panel empty">No runs yet.</div>
          ) : (
            <table data-testid="schedule-runs">
              <thead>
                <tr>
                  <th>Status</th>
                  <th>Tick</th>
                  <th>Started</th>
                  <th>Completed</th>
                  <th>Job</th>
                </tr>
              </thead>
              <tbody>
                {data.runs.map((run) => (
                  <tr key={run.id}>
                    <td>
                      <StatusBadge status={run.status} />
                    </td>
                    <td>{when(run.scheduledFor)}</td>
                    <td>{when(run.startedAt)}</td>
                    <td>{when(run.completedAt)}</td>
                    <td>
                      <Link href={`/w/${workspace}/runs/${run.id}`}>
                        <code>{run.id.slice(0, 8)}</code>
                      </Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}

          <h2>Settings</h2>
          <ScheduleForm
            key={data.updatedAt}
            workspace={workspace}
            initial={{
              path: data.path,
              scriptPath: data.scriptPath,
              schedule: data.schedule,
              timezone: data.timezone,
              args: data.args,
              summary: data.summary,
              enabled: data.enabled,
            }}
          />
        </div>
      )}
    </div>
  );
}
