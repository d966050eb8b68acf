"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "@/components/ui/link";
import { use, useState } from "react";
import { ListSearch, matchesQuery } from "@/components/list-search";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

export default function ResourcesPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const resources = useQuery(trpc.resource.list.queryOptions({ workspace }));
  const [query, setQuery] = useState("");
  const shown = (resources.data ?? []).filter((v) =>
    matchesQuery(query, v.path, v.resourceType, v.description, v.createdBy),
  );
  return (
    <div>
      <div className="toolbar">
        <h1>Resources</h1>
        <div className="row">
          <Link href={`/w/${workspace}/resources/types`}>
            <button type="button">Resource types</button>
          </Link>
          <Link href={`/w/${workspace}/resources/new`}>
            <button className="primary" type="button">
              New resource
            </button>
          </Link>
        </div>
      </div>
      {resources.error && <div className="error">{errorMessage(resources.error)}</div>}
      {resources.data && resources.data.length === 0 && (
        <div className="panel empty">
          No resources yet. A resource is a typed connection (a database, an SMTP server, an API) that scripts
          read with <code>getResource(&quot;u/…&quot;)</code>; keep its passwords in secret variables and
          refer to them as <code>$var:&lt;path&gt;</code>.
        </div>
      )}
      {resources.data && resources.data.length > 0 && (
        <ListSearch
          label="Search resources"
          placeholder="Search by path, description…"
          value={query}
          onChange={setQuery}
          shown={shown.length}
          total={resources.data.length}
        />
      )}
      {resources.data && resources.data.length > 0 && shown.length === 0 && (
        <div className="panel empty">No resource matches “{query}”.</div>
      )}
      {shown.length > 0 && (
        <div className="overflow-x-auto">
          <table>
            <thead>
              <tr>
                <th>Path</th>
                <th>Type</th>
                <th>Description</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((resource) => (
                <tr key={resource.path}>
                  <td>
                    <Link href={`/w/${workspace}/resources/edit/${resource.path}`}>{resource.path}</Link>
                  </td>
                  <td>
                    <code>{resource.resourceType}</code>
                  </td>
                  <td>{resource.description}</td>
                  <td>
                    {new Date(resource.updatedAt).toLocaleString()} by {resource.createdBy}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
