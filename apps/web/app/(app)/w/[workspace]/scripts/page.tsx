"use client";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Workflow } from "lucide-react";
import Link from "@/components/ui/link";
import { use, useMemo, useState } from "react";
import { DataTable } from "@/components/data-table";
import {
  changedColumn,
  editAction,
  ListPage,
  NewButton,
  pathColumn,
  ShowArchived,
} from "@/components/list-page";
import { useTRPC } from "@/lib/trpc";
import { canWrite as canWriteRole, useWorkspaceRole } from "@/lib/workspace-role";

export default function ScriptsPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const [search, setSearch] = useState("");
  const [language, setLanguage] = useState("");
  const [showArchived, setShowArchived] = useState(false);
  const scripts = useQuery({
    ...trpc.script.list.queryOptions({ workspace, includeArchived: showArchived }),
    placeholderData: keepPreviousData,
  });
  // Operators run scripts but never write them: no "New script" for them.
  const canWrite = canWriteRole(useWorkspaceRole(workspace));
  const languages = useMemo(
    () => [...new Set((scripts.data ?? []).map((script) => script.language))].sort(),
    [scripts.data],
  );
  const needle = search.trim().toLowerCase();
  const matches = (script: { language: string; path: string; summary: string }) =>
    (!language || script.language === language) &&
    (!needle || script.path.toLowerCase().includes(needle) || script.summary.toLowerCase().includes(needle));
  const filtered = !!needle || !!language;

  return (
    <ListPage
      title="Scripts"
      className="stack min-w-0"
      actions={
        <>
          {/* Flows chain scripts into steps: one click from the list a new user starts from. */}
          <Link href={`/w/${workspace}/flows`} className="inline-flex items-center gap-1">
            <Workflow aria-hidden className="size-4" /> Flows
          </Link>
          {canWrite && <NewButton href={`/w/${workspace}/scripts/new`} label="New script" />}
        </>
      }
    >
      <DataTable
        query={scripts}
        testId="scripts-table"
        rowKey={(script) => script.path}
        rowProps={() => ({ "data-testid": "script-row" })}
        filter={matches}
        filters={
          <div className="row flex-wrap items-end" role="search" aria-label="Filter scripts">
            <label className="min-w-48 flex-1">
              Search
              <input
                type="search"
                name="search"
                placeholder="Path or summary"
                value={search}
                onChange={(event) => setSearch(event.target.value)}
              />
            </label>
            <label>
              Language
              <select name="language" value={language} onChange={(event) => setLanguage(event.target.value)}>
                <option value="">All languages</option>
                {languages.map((name) => (
                  <option key={name} value={name}>
                    {name}
                  </option>
                ))}
              </select>
            </label>
            <ShowArchived checked={showArchived} onChange={setShowArchived} />
          </div>
        }
        empty={canWrite ? "No scripts yet. Create the first one with “New script”." : "No scripts yet."}
        noMatch={() => `No script matches ${filtered ? "these filters" : "this view"}.`}
        columns={[
          pathColumn((script) => `/w/${workspace}/scripts/get/${script.path}`),
          { header: "Summary", cell: (script) => script.summary },
          { header: "Language", sortBy: (script) => script.language, cell: (script) => script.language },
          { header: "Version", cell: (script) => <code>{script.hash}</code> },
          changedColumn("Deployed", "createdAt", "createdBy"),
        ]}
        actions={[editAction((script) => `/w/${workspace}/scripts/edit/${script.path}`)]}
      />
    </ListPage>
  );
}
