"use client";
import { useQuery } from "@tanstack/react-query";
import { use } from "react";
import { DataTable } from "@/components/data-table";
import { changedColumn, ListPage, NewButton, pathColumn } from "@/components/list-page";
import { useTRPC } from "@/lib/trpc";

export default function VariablesPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const variables = useQuery(trpc.variable.list.queryOptions({ workspace }));
  return (
    <ListPage
      title="Variables"
      actions={<NewButton href={`/w/${workspace}/variables/new`} label="New variable" />}
    >
      <DataTable
        query={variables}
        rowKey={(variable) => variable.path}
        rowProps={() => ({ "data-testid": "variable-row" })}
        search={{
          label: "Search variables",
          placeholder: "Search by path, description…",
          fields: (v) => [v.path, v.description, v.isSecret ? "secret" : v.value, v.createdBy],
        }}
        empty={
          <>
            No variables yet. Scripts read them with <code>getVariable(&quot;u/…&quot;)</code>; secrets are
            encrypted and never shown in lists.
          </>
        }
        noMatch={(query) => <>No variable matches “{query}”.</>}
        columns={[
          pathColumn((variable) => `/w/${workspace}/variables/edit/${variable.path}`),
          {
            header: "Value",
            cell: (variable) =>
              variable.isSecret ? (
                <span className="muted" title="encrypted; open the variable to reveal it">
                  secret ••••••
                </span>
              ) : (
                <code>{(variable.value ?? "").slice(0, 80)}</code>
              ),
          },
          { header: "Description", cell: (variable) => variable.description },
          changedColumn("Updated", "updatedAt", "createdBy"),
        ]}
      />
    </ListPage>
  );
}
