"use client";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Plus } from "lucide-react";
import Link from "@/components/ui/link";
import { use, useState } from "react";
import { DataTable } from "@/components/data-table";
import { changedColumn, editAction, ListPage, pathColumn, ShowArchived } from "@/components/list-page";
import { Button } from "@/components/ui/button";
import { useTRPC } from "@/lib/trpc";
import { canWrite, useWorkspaceRole } from "@/lib/workspace-role";

export default function FlowsPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const [showArchived, setShowArchived] = useState(false);
  const flows = useQuery({
    ...trpc.flow.list.queryOptions({ workspace, includeArchived: showArchived }),
    placeholderData: keepPreviousData,
  });
  // Operators run flows but never write them: no "New flow" for them.
  const writer = canWrite(useWorkspaceRole(workspace));

  return (
    <ListPage
      title="Flows"
      className="stack min-w-0"
      actions={
        writer && (
          <Button asChild variant="primary">
            <Link href={`/w/${workspace}/flows/add`}>
              <Plus aria-hidden /> New flow
            </Link>
          </Button>
        )
      }
    >
      <DataTable
        query={flows}
        testId="flows-table"
        rowKey={(flow) => flow.path}
        rowProps={() => ({ "data-testid": "flow-row" })}
        search={{
          label: "Search flows",
          placeholder: "Path, summary or author",
          fields: (flow) => [flow.path, flow.summary, flow.editedBy],
          always: true,
        }}
        filters={<ShowArchived checked={showArchived} onChange={setShowArchived} />}
        empty={
          writer
            ? "No flows yet. A flow chains steps (scripts, branches, loops); create the first one with “New flow”."
            : "No flows yet."
        }
        emptyTestId="flows-empty"
        noMatch={() => "No flow matches this search."}
        columns={[
          pathColumn((flow) => `/w/${workspace}/flows/get/${flow.path}`),
          { header: "Summary", cell: (flow) => flow.summary },
          { header: "Steps", sortBy: (flow) => flow.steps, cell: (flow) => flow.steps },
          changedColumn("Deployed", "editedAt", "editedBy"),
        ]}
        actions={[editAction((flow) => `/w/${workspace}/flows/edit/${flow.path}`)]}
      />
    </ListPage>
  );
}
