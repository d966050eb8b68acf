"use client";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Pencil, Plus } from "lucide-react";
import Link from "@/components/ui/link";
import { use, useState } from "react";
import { ListSearch, matchesQuery } from "@/components/list-search";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { canWrite, useWorkspaceRole } from "@/lib/workspace-role";

export default function FlowsPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const [query, setQuery] = useState("");
  const [showArchived, setShowArchived] = useState(false);
  const flows = useQuery({
    ...trpc.flow.list.queryOptions({ workspace, includeArchived: showArchived }),
    placeholderData: keepPreviousData,
  });
  // Operators run flows but never write them: no "New flow" for them.
  const writer = canWrite(useWorkspaceRole(workspace));
  const all = flows.data ?? [];
  const shown = all.filter((flow) => matchesQuery(query, flow.path, flow.summary, flow.editedBy));
  const anyEditable = shown.some((flow) => flow.canWrite && !flow.archived);

  return (
    <div className="stack min-w-0">
      <div className="toolbar">
        <h1>Flows</h1>
        {writer && (
          <Button asChild variant="primary">
            <Link href={`/w/${workspace}/flows/add`}>
              <Plus aria-hidden /> New flow
            </Link>
          </Button>
        )}
      </div>
      <div className="row flex-wrap items-center">
        <ListSearch
          label="Search flows"
          placeholder="Path, summary or author"
          value={query}
          onChange={setQuery}
          shown={shown.length}
          total={all.length}
        />
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
      {flows.error && <div className="error">{errorMessage(flows.error)}</div>}
      {flows.data && all.length === 0 && (
        <div className="panel empty" data-testid="flows-empty">
          {writer
            ? "No flows yet. A flow chains steps (scripts, branches, loops); create the first one with “New flow”."
            : "No flows yet."}
        </div>
      )}
      {all.length > 0 && shown.length === 0 && (
        <div className="panel empty">No flow matches this search.</div>
      )}
      {shown.length > 0 && (
        <div className="relative overflow-x-auto" data-testid="flows-table">
          <table>
            <thead>
              <tr>
                <th>Path</th>
                <th>Summary</th>
                <th>Steps</th>
                <th>Deployed</th>
                {anyEditable && (
                  <th>
                    <span className="sr-only">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {shown.map((flow) => (
                <tr key={flow.path} data-testid="flow-row">
                  <td>
                    <Link href={`/w/${workspace}/flows/get/${flow.path}`}>{flow.path}</Link>
                    {flow.archived && (
                      <>
                        {" "}
                        <Badge tone="warn">archived</Badge>
                      </>
                    )}
                  </td>
                  <td>{flow.summary}</td>
                  <td>{flow.steps}</td>
                  <td>
                    {new Date(flow.editedAt).toLocaleString()} by {flow.editedBy}
                  </td>
                  {anyEditable && (
                    <td>
                      {flow.canWrite && !flow.archived && (
                        <Button asChild size="sm" variant="ghost">
                          <Link
                            href={`/w/${workspace}/flows/edit/${flow.path}`}
                            aria-label={`Edit ${flow.path}`}
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
