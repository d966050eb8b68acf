"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "@/components/ui/link";
import { use, useState } from "react";
import { StatusBadge } from "@/components/status-badge";
import { ListSearch, matchesQuery } from "@/components/list-search";
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
  const [query, setQuery] = useState("");
  const shown = (schedules.data ?? []).filter((s) =>
    matchesQuery(
      query,
      s.path,
      s.scriptPath,
      s.summary,
      s.schedule,
      s.enabled ? "enabled" : "disabled paused",
    ),
  );
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
    <div>
      <div className="toolbar">
        <h1>Schedules</h1>
        <Link href={`/w/${workspace}/schedules/new`}>
          <button className="primary" type="button">
            New schedule
          </button>
        </Link>
      </div>
      {schedules.error && <div className="error">{errorMessage(schedules.error)}</div>}
      {toggle.error && (
        <div className="error" data-testid="schedule-toggle-error">
          Could not change {toggle.variables?.path}: {errorMessage(toggle.error)}
        </div>
      )}
      {schedules.data && schedules.data.length === 0 && (
        <div className="panel empty">
          No schedules yet. A schedule runs a script on a cron (with seconds) in the time zone you choose;
          create one with “New schedule”.
        </div>
      )}
      {schedules.data && schedules.data.length > 0 && (
        <ListSearch
          label="Search schedules"
          placeholder="Search by path, script, cron…"
          value={query}
          onChange={setQuery}
          shown={shown.length}
          total={schedules.data.length}
        />
      )}
      {schedules.data && schedules.data.length > 0 && shown.length === 0 && (
        <div className="panel empty">No schedule matches “{query}”.</div>
      )}
      {shown.length > 0 && (
        <div className="overflow-x-auto">
          <table>
            <thead>
              <tr>
                <th>Enabled</th>
                <th>Path</th>
                <th>Script</th>
                <th>Cron</th>
                <th>Next run</th>
                <th>Last runs</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((listed) => {
                const schedule =
                  listed.path in clicked ? { ...listed, enabled: clicked[listed.path] } : listed;
                return (
                  <tr key={schedule.path}>
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`enabled ${schedule.path}`}
                        checked={schedule.enabled}
                        disabled={schedule.path in clicked}
                        onChange={(e) =>
                          toggle.mutate({ workspace, path: schedule.path, enabled: e.target.checked })
                        }
                      />
                    </td>
                    <td>
                      <Link href={`/w/${workspace}/schedules/edit/${schedule.path}`}>{schedule.path}</Link>
                      {schedule.summary && <div className="muted">{schedule.summary}</div>}
                      {schedule.error && <div className="field-error">{schedule.error}</div>}
                    </td>
                    <td>{schedule.scriptPath}</td>
                    <td>
                      <code>{schedule.schedule}</code> <span className="muted">{schedule.timezone}</span>
                    </td>
                    <td>{schedule.enabled ? when(schedule.nextRunAt) : "paused"}</td>
                    <td>
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
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
