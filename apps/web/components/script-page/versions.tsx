"use client";
import { useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { useState } from "react";
import { Badge } from "@/components/ui/badge";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

const VersionDiff = dynamic(() => import("./version-diff"), {
  ssr: false,
  loading: () => <p className="muted">Loading the diff…</p>,
});

function label(version: { hash: string; createdAt: string }, index: number): string {
  return `${version.hash.slice(0, 8)} · ${new Date(version.createdAt).toLocaleString()}${index === 0 ? " (latest)" : ""}`;
}

/** Every deployed version of the script, and a side-by-side diff between any two of them. */
export function ScriptVersions({
  workspace,
  path,
  language,
}: {
  workspace: string;
  path: string;
  language: string;
}) {
  const trpc = useTRPC();
  // Fresh for a few seconds: the script page asked for it with the script (no second fetch on mount).
  const versions = useQuery({ ...trpc.script.versions.queryOptions({ workspace, path }), staleTime: 5000 });
  const list = versions.data ?? [];
  // By default the latest version against the one before it.
  const [picked, setPicked] = useState<{ from?: string; to?: string }>({});
  const from = picked.from ?? list[1]?.hash;
  const to = picked.to ?? list[0]?.hash;
  const comparing = !!from && !!to && from !== to;
  const original = useQuery({
    ...trpc.script.version.queryOptions({ workspace, hash: from ?? "" }),
    enabled: comparing,
  });
  const modified = useQuery({
    ...trpc.script.version.queryOptions({ workspace, hash: to ?? "" }),
    enabled: comparing,
  });

  return (
    <section className="panel stack" aria-labelledby="versions-title" data-testid="script-versions">
      <h2 id="versions-title" className="m-0">
        Versions
      </h2>
      {versions.error && <p className="error">{errorMessage(versions.error)}</p>}
      {list.length > 0 && (
        <div className="overflow-x-auto">
          <table>
            <thead>
              <tr>
                <th>Version</th>
                <th>Deployed by</th>
                <th>When</th>
                <th>Summary</th>
              </tr>
            </thead>
            <tbody>
              {list.map((version, index) => (
                <tr key={version.hash} data-testid="script-version">
                  <td>
                    <code>{version.hash}</code> {index === 0 && <Badge>latest</Badge>}{" "}
                    {version.archived && <Badge tone="warn">archived</Badge>}
                  </td>
                  <td>{version.createdBy}</td>
                  <td>{new Date(version.createdAt).toLocaleString()}</td>
                  <td>{version.summary || <span className="muted">—</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.length === 1 && <p className="muted m-0">Only one version so far: deploy another to compare.</p>}
      {list.length > 1 && (
        <>
          <h3 className="m-0">Compare two versions</h3>
          <div className="row flex-wrap">
            <label className="min-w-0 flex-1">
              Older (left)
              <select
                name="diff_from"
                value={from ?? ""}
                onChange={(event) => setPicked({ from: event.target.value, to })}
              >
                {list.map((version, index) => (
                  <option key={version.hash} value={version.hash}>
                    {label(version, index)}
                  </option>
                ))}
              </select>
            </label>
            <label className="min-w-0 flex-1">
              Newer (right)
              <select
                name="diff_to"
                value={to ?? ""}
                onChange={(event) => setPicked({ from, to: event.target.value })}
              >
                {list.map((version, index) => (
                  <option key={version.hash} value={version.hash}>
                    {label(version, index)}
                  </option>
                ))}
              </select>
            </label>
          </div>
          {!comparing && <p className="muted m-0">Pick two different versions to see what changed.</p>}
          {(original.error ?? modified.error) && (
            <p className="error">{errorMessage(original.error ?? modified.error)}</p>
          )}
          {comparing && original.data && modified.data && (
            <VersionDiff
              language={modified.data.language || language}
              original={original.data.content}
              modified={modified.data.content}
            />
          )}
        </>
      )}
    </section>
  );
}
