"use client";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Pencil, Workflow } from "lucide-react";
import Link from "@/components/ui/link";
import { use, useMemo, useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { errorMessage } from "@/lib/errors";
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
  const shown = (scripts.data ?? []).filter(
    (script) =>
      (!language || script.language === language) &&
      (!needle ||
        script.path.toLowerCase().includes(needle) ||
        script.summary.toLowerCase().includes(needle)),
  );
  const filtered = !!needle || !!language;

  return (
    <div className="stack min-w-0">
      <div className="toolbar">
        <h1>Scripts</h1>
        <div className="row items-center">
          {/* Flows chain scripts into steps: one click from the list a new user starts from. */}
          <Link href={`/w/${workspace}/flows`} className="inline-flex items-center gap-1">
            <Workflow aria-hidden className="size-4" /> Flows
          </Link>
          {canWrite && (
            <Link href={`/w/${workspace}/scripts/new`}>
              <button className="primary" type="button">
                New script
              </button>
            </Link>
          )}
        </div>
      </div>
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
        <label className="flex-row items-center gap-2">
          <input
            type="checkbox"
            name="show_archived"
            checked={showArchived}
            onChange={(event) => setShowArchived(event.target.checked)}
          />
          Show archived
        </label>
      </div>
      {scripts.error && <div className="error">{errorMessage(scripts.error)}</div>}
      {scripts.data && scripts.data.length === 0 && (
        <div className="panel empty">
          {canWrite ? "No scripts yet. Create the first one with “New script”." : "No scripts yet."}
        </div>
      )}
      {scripts.data && scripts.data.length > 0 && shown.length === 0 && (
        <div className="panel empty">No script matches {filtered ? "these filters" : "this view"}.</div>
      )}
      {shown.length > 0 && (
        // relative: the header's screen-reader-only label (absolutely positioned) stays inside the
        // scrolling wrapper instead of widening the page.
        <div className="relative overflow-x-auto" data-testid="scripts-table">
          <table>
            <thead>
              <tr>
                <th>Path</th>
                <th>Summary</th>
                <th>Language</th>
                <th>Version</th>
                <th>Deployed</th>
                {shown.some((script) => script.canWrite && !script.archived) && (
                  <th>
                    <span className="sr-only">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {shown.map((script) => (
                <tr key={script.path} data-testid="script-row">
                  <td>
                    <Link href={`/w/${workspace}/scripts/get/${script.path}`}>{script.path}</Link>
                    {script.archived && (
                      <>
                        {" "}
                        <Badge tone="warn">archived</Badge>
                      </>
                    )}
                  </td>
                  <td>{script.summary}</td>
                  <td>{script.language}</td>
                  <td>
                    <code>{script.hash}</code>
                  </td>
                  <td>
                    {new Date(script.createdAt).toLocaleString()} by {script.createdBy}
                  </td>
                  {shown.some((each) => each.canWrite && !each.archived) && (
                    <td>
                      {script.canWrite && !script.archived && (
                        <Button asChild size="sm" variant="ghost">
                          <Link
                            href={`/w/${workspace}/scripts/edit/${script.path}`}
                            aria-label={`Edit ${script.path}`}
                          >
                            <Pencil aria-hidden /> Edit
                          </Link>
                        </Button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
