"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { use } from "react";
import { errorMessage } from "@/lib/errors";
import { useCanWriteScripts } from "@/components/script-editor";
import { useTRPC } from "@/lib/trpc";

export default function ScriptsPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const scripts = useQuery(trpc.script.list.queryOptions({ workspace }));
  // Operators run scripts but never write them: no "New script" for them.
  const canWrite = useCanWriteScripts(workspace);
  return (
    <div>
      <div className="toolbar">
        <h1>Scripts</h1>
        {canWrite && (
          <Link href={`/w/${workspace}/scripts/new`}>
            <button className="primary" type="button">
              New script
            </button>
          </Link>
        )}
      </div>
      {scripts.error && <div className="error">{errorMessage(scripts.error)}</div>}
      {scripts.data && scripts.data.length === 0 && (
        <div className="panel empty">
          {canWrite ? "No scripts yet. Create the first one with “New script”." : "No scripts yet."}
        </div>
      )}
      {scripts.data && scripts.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Path</th>
              <th>Summary</th>
              <th>Language</th>
              <th>Version</th>
              <th>Deployed</th>
            </tr>
          </thead>
          <tbody>
            {scripts.data.map((script) => (
              <tr key={script.path}>
                <td>
                  <Link href={`/w/${workspace}/scripts/edit/${script.path}`}>{script.path}</Link>
                </td>
                <td>{script.summary}</td>
                <td>{script.language}</td>
                <td>
                  <code>{script.hash}</code>
                </td>
                <td>
                  {new Date(script.createdAt).toLocaleString()} by {script.createdBy}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
