"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { use, useState } from "react";
import { toast } from "sonner";
import { StatusBadge } from "@/components/status-badge";
import { useConfirm } from "@/components/ui/confirm";
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
  // Whether the caller may change this schedule (role and path): the server decides.
  const access = useQuery(trpc.access.path.queryOptions({ workspace, path, kind: "schedule" }));
  const canWrite = access.data?.canWrite ?? false;
  const confirm = useConfirm();
  const refresh = () => queryClient.invalidateQueries(trpc.schedule.pathFilter());
  // Optimistic, as on the list: the box shows what was clicked until the server has answered and
  // the schedule has been re-read; if the server refuses, it goes back and the error is shown.
  const [clicked, setClicked] = useState<boolean | null>(null);
  const toggle = useMutation(
    trpc.schedule.setEnabled.mutationOptions({
      onMutate: ({ enabled }) => setClicked(enabled),
      onError: (error) => {
        setClicked(null);
        toast.error(errorMessage(error));
      },
      onSuccess: async (_data, { enabled }) => {
        await refresh();
        setClicked(null);
        toast.success(`${enabled ? "Enabled" : "Paused"} ${path}`);
      },
    }),
  );
  const remove = useMutation(
    trpc.schedule.delete.mutationOptions({
      onSuccess: async () => {
        toast.success(`Deleted schedule ${path}`);
        await refresh();
        router.push(`/w/${workspace}/schedules`);
      },
    }),
  );
  const data = schedule.data;
  const enabled = clicked ?? data?.enabled ?? false;
  return (
    <div>
      <div className="toolbar">
        <h1>Schedule {path}</h1>
        <Link href={`/w/${workspace}/schedules`}>Back to schedules</Link>
      </div>
      {schedule.error && <div className="error">{errorMessage(schedule.error)}</div>}
      {(toggle.error ?? remove.error) && (
        <div className="error" role="alert">
          {errorMessage(toggle.error ?? remove.error)}
        </div>
      )}
      {data && (
        <div className="stack">
          <div className="panel row" style={{ alignItems: "center" }}>
            <label style={{ flexDirection: "row", alignItems: "center" }}>
              <input
                type="checkbox"
                name="enabled"
                checked={enabled}
                disabled={!canWrite}
                onChange={(e) => toggle.mutate({ workspace, path, enabled: e.target.checked })}
              />
              Enabled
            </label>
            <span className="muted" data-testid="next-run">
              {enabled
                ? `Next run: ${clicked === null ? when(data.nextRunAt) : "being computed…"}`
                : "Paused: no runs until enabled again"}
            </span>
            <span className="muted">Runs as {data.permissionedAs}</span>
            {canWrite && (
              <button
                type="button"
                disabled={remove.isPending}
                onClick={async () => {
                  const ok = await confirm({
                    title: `Delete schedule ${path}?`,
                    description: "It will no longer start runs. Its past runs stay.",
                    action: "Delete schedule",
                    destructive: true,
                  });
                  if (ok) remove.mutate({ workspace, path });
                }}
              >
                Delete
              </button>
            )}
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
          {canWrite ? (
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
          ) : (
            access.data && (
              <div className="panel stack" data-testid="schedule-settings">
                <p className="muted m-0">You can see this schedule but not change it.</p>
                <dl className="m-0 grid grid-cols-[auto_1fr] gap-x-4 gap-y-1">
                  <dt className="font-semibold">Script</dt>
                  <dd className="m-0 break-all">
                    <Link href={`/w/${workspace}/scripts/get/${data.scriptPath}`}>{data.scriptPath}</Link>
                  </dd>
                  <dt className="font-semibold">Cron</dt>
                  <dd className="m-0">
                    <code>{data.schedule}</code>
                  </dd>
                  <dt className="font-semibold">Time zone</dt>
                  <dd className="m-0">{data.timezone}</dd>
                  <dt className="font-semibold">Summary</dt>
                  <dd className="m-0">{data.summary || "—"}</dd>
                  <dt className="font-semibold">Arguments</dt>
                  <dd className="m-0 min-w-0">
                    <pre className="m-0 overflow-x-auto">{JSON.stringify(data.args, null, 2)}</pre>
                  </dd>
                </dl>
              </div>
            )
          )}
        </div>
      )}
    </div>
  );
}
