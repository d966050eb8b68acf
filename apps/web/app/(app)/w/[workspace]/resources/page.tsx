"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "@/components/ui/link";
import { use } from "react";
import { DataTable } from "@/components/data-table";
import { changedColumn, ListPage, NewButton, pathColumn } from "@/components/list-page";
import { useTRPC } from "@/lib/trpc";

export default function ResourcesPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const resources = useQuery(trpc.resource.list.queryOptions({ workspace }));
  return (
    <ListPage
      title="Resources"
      actions={
        <>
          <Link href={`/w/${workspace}/resources/types`}>
            <button type="button">Resource types</button>
          </Link>
          <NewButton href={`/w/${workspace}/resources/new`} label="New resource" />
        </>
      }
    >
      <DataTable
        query={resources}
        rowKey={(resource) => resource.path}
        search={{
          label: "Search resources",
          placeholder: "Search by path, description…",
          fields: (v) => [v.path, v.resourceType, v.description, v.createdBy],
        }}
        empty={
          <>
            No resources yet. A resource is a typed connection (a database, an SMTP server, an API) that
            scripts read with <code>getResource(&quot;u/…&quot;)</code>; keep its passwords in secret
            variables and refer to them as <code>$var:&lt;path&gt;</code>.
          </>
        }
        noMatch={(query) => <>No resource matches “{query}”.</>}
        columns={[
          pathColumn((resource) => `/w/${workspace}/resources/edit/${resource.path}`),
          { header: "Type", sortBy: (r) => r.resourceType, cell: (r) => <code>{r.resourceType}</code> },
          { header: "Description", cell: (resource) => resource.description },
          changedColumn("Updated", "updatedAt", "createdBy"),
        ]}
      />
    </ListPage>
  );
}
