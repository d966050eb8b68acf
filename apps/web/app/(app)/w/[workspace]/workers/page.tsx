"use client";
import { AlertsBanner } from "@/components/workers/alerts-banner";
import { useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { use, useState } from "react";
import { Button } from "@/components/ui/button";
import Link from "@/components/ui/link";
import { ListSearch, matchesQuery } from "@/components/list-search";
import { AutoscalingTable } from "@/components/workers/autoscaling-table";
import { CustomTagsEditor } from "@/components/workers/custom-tags-editor";
import { GroupConfigEditor, type GroupConfig } from "@/components/workers/group-config-editor";
import { QueueTable, WorkerGroupPanel, type WorkerRow } from "@/components/workers/worker-tables";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

const REFRESH_MS = 5000;

// recharts is large: the charts arrive after the tables instead of holding them back.
const FleetCharts = dynamic(
  () => import("@/components/workers/fleet-charts").then((module) => module.FleetCharts),
  { ssr: false, loading: () => <div className="panel m-0 h-[290px]" aria-hidden /> },
);

function NewGroupForm({ onCreate }: { onCreate: (name: string) => void }) {
  const [name, setName] = useState("");
  return (
    <form
      className="row"
      onSubmit={(event) => {
        event.preventDefault();
        if (name.trim()) onCreate(name.trim());
        setName("");
      }}
    >
      <label>
        New worker group config
        <input name="new_group" placeholder="gpu" value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <button type="submit">Add</button>
    </form>
  );
}

export default function WorkersPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const me = useQuery(trpc.me.queryOptions());
  const superadmin = me.data?.isSuperAdmin === true;
  const workers = useQuery({ ...trpc.worker.list.queryOptions(), refetchInterval: REFRESH_MS });
  const queue = useQuery({ ...trpc.worker.queueStats.queryOptions(), refetchInterval: REFRESH_MS });
  const tags = useQuery(trpc.worker.customTags.queryOptions({ workspace }));
  const groups = useQuery({ ...trpc.worker.groups.queryOptions(), enabled: superadmin });
  const [added, setAdded] = useState<string[]>([]);
  const [query, setQuery] = useState("");

  const byGroup = new Map<string, WorkerRow[]>();
  for (const worker of workers.data ?? []) {
    byGroup.set(worker.worker_group, [...(byGroup.get(worker.worker_group) ?? []), worker]);
  }
  // The search keeps the groups whose name matches (all their workers) and, in other groups, the
  // workers whose name, host or tags match.
  const matchingWorkers = (group: string) =>
    matchesQuery(query, group)
      ? (byGroup.get(group) ?? [])
      : (byGroup.get(group) ?? []).filter((w) =>
          matchesQuery(query, w.worker, w.host, w.custom_tags.join(" "), w.sandbox),
        );
  const configs = new Map((groups.data ?? []).map((g) => [g.name, g.config as GroupConfig]));
  const names = [
    ...new Set([...byGroup.keys(), ...(superadmin ? [...configs.keys(), ...added] : [])]),
  ].sort();
  const shownGroups = names.filter(
    (group) => matchesQuery(query, group) || matchingWorkers(group).length > 0,
  );
  const workerCount = workers.data?.length ?? 0;

  return (
    <div>
      <div className="toolbar">
        <h1 style={{ margin: 0 }}>Workers</h1>
        <Button asChild size="sm">
          <Link href={`/w/${workspace}/workers/simulator`}>Sizing simulator</Link>
        </Button>
      </div>
      <AlertsBanner isSuperAdmin={superadmin} />
      <FleetCharts />
      {workers.error && <div className="error">{errorMessage(workers.error)}</div>}
      {workers.data && names.length === 0 && (
        <div className="panel empty">No worker has pinged in the last minute.</div>
      )}
      {names.length > 0 && (
        <ListSearch
          label="Search workers"
          placeholder="Search by group, worker, host, tag…"
          value={query}
          onChange={setQuery}
          shown={shownGroups.reduce((n, group) => n + matchingWorkers(group).length, 0)}
          total={workerCount}
        />
      )}
      {names.length > 0 && shownGroups.length === 0 && (
        <div className="panel empty">No worker or group matches “{query}”.</div>
      )}
      {shownGroups.map((group) => (
        <WorkerGroupPanel
          key={group}
          group={group}
          workspace={workspace}
          showJobs={superadmin}
          workers={matchingWorkers(group)}
          config={
            superadmin &&
            groups.data && (
              <details open={!byGroup.has(group)}>
                <summary>{configs.has(group) ? "Group config" : "Create a config for this group"}</summary>
                <GroupConfigEditor group={group} config={configs.get(group) ?? null} />
              </details>
            )
          }
        />
      ))}
      {superadmin && (
        <div className="panel" style={{ marginBottom: "1rem" }}>
          <NewGroupForm onCreate={(name) => setAdded((current) => [...current, name])} />
          {groups.error && <div className="error">{errorMessage(groups.error)}</div>}
        </div>
      )}

      {superadmin && (
        <>
          <h2>Autoscaling</h2>
          <AutoscalingTable />
        </>
      )}

      <h2>Queue</h2>
      {queue.error && <div className="error">{errorMessage(queue.error)}</div>}
      {queue.data && <QueueTable stats={queue.data} />}

      <h2>Tags</h2>
      {tags.error && <div className="error">{errorMessage(tags.error)}</div>}
      {tags.data && (
        <div className="panel stack">
          <div data-testid="available-tags">
            <span className="muted">Tags scripts of {workspace} may use: </span>
            {tags.data.available.map((tag) => (
              <code key={tag} style={{ marginRight: "0.5rem" }}>
                {tag}
              </code>
            ))}
          </div>
          {tags.data.setting && <CustomTagsEditor setting={tags.data.setting} />}
        </div>
      )}
    </div>
  );
}
