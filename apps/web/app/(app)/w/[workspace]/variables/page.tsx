"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "@/components/ui/link";
import { use, useState } from "react";
import { ListSearch, matchesQuery } from "@/components/list-search";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

export default function VariablesPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const variables = useQuery(trpc.variable.list.queryOptions({ workspace }));
  const [query, setQuery] = useState("");
  const shown = (variables.data ?? []).filter((v) =>
    matchesQuery(query, v.path, v.description, v.isSecret ? "secret" : v.value, v.createdBy),
  );
  return (
    <div>
      <div className="toolbar">
        <h1>Variables</h1>
        <Link href={`/w/${workspace}/variables/new`}>
          <button className="primary" type="button">
            New variable
          </button>
        </Link>
      </div>
      {variables.error && <div className="error">{errorMessage(variables.error)}</div>}
      {variables.data && variables.data.length === 0 && (
        <div className="panel empty">
          No variables yet. Scripts read them with <code>getVariable(&quot;u/…&quot;)</code>; secrets are
          encrypted and never shown in lists.
        </div>
      )}
      {variables.data && variables.data.length > 0 && (
        <ListSearch
          label="Search variables"
          placeholder="Search by path, description…"
          value={query}
          onChange={setQuery}
          shown={shown.length}
          total={variables.data.length}
        />
      )}
      {variables.data && variables.data.length > 0 && shown.length === 0 && (
        <div className="panel empty">No variable matches “{query}”.</div>
      )}
      {shown.length > 0 && (
        <div className="overflow-x-auto">
          <table>
            <thead>
              <tr>
                <th>Path</th>
                <th>Value</th>
                <th>Description</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((variable) => (
                <tr key={variable.path} data-testid="variable-row">
                  <td>
                    <Link href={`/w/${workspace}/variables/edit/${variable.path}`}>{variable.path}</Link>
                  </td>
                  <td>
                    {variable.isSecret ? (
                      <span className="muted" title="encrypted; open the variable to reveal it">
                        secret ••••••
                      </span>
                    ) : (
                      <code>{(variable.value ?? "").slice(0, 80)}</code>
                    )}
                  </td>
                  <td>{variable.description}</td>
                  <td>
                    {new Date(variable.updatedAt).toLocaleString()} by {variable.createdBy}
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
