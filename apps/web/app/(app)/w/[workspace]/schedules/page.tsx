"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "@/components/ui/link";
import { use, useState } from "react";
import { StatusBadge } from "@/components/status-badge";
import { DataTable } from "@/components/data-table";
import { ListPage, NewButton } from "@/components/list-page";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

const REFRESH_MS = 5000;

function when(iso: string | null): string {
  return iso ? new Date(iso).toLocaleString() : "—";
}

export default function SchedulesPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const schedules = useQuery({
    ...trpc.schedule.list.queryOptions({ workspace }),
    refetchInterval: REFRESH_MS,
  });
  // Optimistic update: a box shows what was clicked (by path) until the server has answered and
  // the list has been re-read; if the server refuses, it goes back and the error is shown.
  const [clicked, setClicked] = useState<Record<string, boolean>>({});
  const enabled = (schedule: { path: string; enabled: boolean }) =>
    clicked[schedule.path] ?? schedule.enabled;
  const forget = (path: string) =>
    setClicked((current) => {
      const { [path]: _, ...rest } = current;
      return rest;
    });
  const toggle = useMutation(
    trpc.schedule.setEnabled.mutationOptions({
      onMutate: ({ path, enabled }) => setClicked((current) => ({ ...current, [path]: enabled })),
      onError: (_error, { path }) => forget(path),
      onSuccess: async (_data, { path }) => {
        await queryClient.invalidateQueries(trpc.schedule.pathFilter());
        forget(path);
      },
    }),
  );
  return (
    <ListPage
      title="Schedules"
      actions={<NewButton href={`/w/${workspace}/schedules/new`} label="New schedule" />}
    >
      {toggle.error && (
        <div className="error" data-testid="schedule-toggle-error">
          Could not change {toggle.variables?.path}: {errorMessage(toggle.error)}
        </div>
      )}
      <DataTable
        query={schedules}
        rowKey={(schedule) => schedule.path}
        search={{
          label: "Search schedules",
          placeholder: "Search by path, script, cron…",
          fields: (s) => [
            s.path,
            s.scriptPath,
            s.summary,
            s.schedule,
            s.enabled ? "enabled" : "disabled paused",
          ],
        }}
        empty={
          <>
            No schedules yet. A schedule runs a script on a cron (with seconds) in the time zone you choose;
            create one with “New schedule”.
          </>
        }
        noMatch={(query) => <>No schedule matches “{query}”.</>}
        columns={[
          {
            header: "Enabled",
            cell: (schedule) => (
              <input
                type="checkbox"
                aria-label={`enabled ${schedule.path}`}
                checked={enabled(schedule)}
                disabled={schedule.path in clicked}
                onChange={(e) => toggle.mutate({ workspace, path: schedule.path, enabled: e.target.checked })}
              />
            ),
          },
          {
            header: "Path",
            sortBy: (schedule) => schedule.path,
            cell: (schedule) => (
              <>
                <Link href={`/w/${workspace}/schedules/edit/${schedule.path}`}>{schedule.path}</Link>
                {schedule.summary && <div className="muted">{schedule.summary}</div>}
                {schedule.error && <div className="field-error">{schedule.error}</div>}
              </>
            ),
          },
          {
            header: "Script",
            sortBy: (schedule) => schedule.scriptPath,
            cell: (schedule) => schedule.scriptPath,
          },
          {
            header: "Cron",
            cell: (schedule) => (
              <>
                <code>{schedule.schedule}</code> <span className="muted">{schedule.timezone}</span>
              </>
            ),
          },
          {
            header: "Next run",
            cell: (schedule) => (enabled(schedule) ? when(schedule.nextRunAt) : "paused"),
          },
          {
            header: "Last runs",
            cell: (schedule) => (
              <>
                {schedule.runs.length === 0 && <span className="muted">none yet</span>}
                {schedule.runs.map((run) => (
                  <Link
                    key={run.id}
                    href={`/w/${workspace}/runs/${run.id}`}
                    title={when(run.scheduledFor)}
                    style={{ marginRight: "0.25rem" }}
                  >
                    <StatusBadge status={run.status} />
                  </Link>
                ))}
              </>
            ),
          },
        ]}
      />
    </ListPage>
  );
}
