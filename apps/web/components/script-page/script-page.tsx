"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Webhook } from "lucide-react";
import Link from "@/components/ui/link";
import { useEffect, useState } from "react";
import type { ArgSchema } from "@millrace/runtime";
import {
  ItemPage,
  ItemSection,
  ItemSummary,
  RecentRuns,
  recentRunsInput,
  RunForm,
  useOpenStartedRun,
} from "@/components/item-page";
import { Badge } from "@/components/ui/badge";
import { useTRPC } from "@/lib/trpc";
import { ScriptActions } from "./script-actions";
import { ScriptVersions } from "./versions";

function ScriptRunForm({ workspace, path, schema }: { workspace: string; path: string; schema: ArgSchema }) {
  const trpc = useTRPC();
  const run = useMutation(
    trpc.job.runScript.mutationOptions({ onSuccess: useOpenStartedRun(workspace, path) }),
  );
  return <RunForm workspace={workspace} path={path} schema={schema} run={run} />;
}

/**
 * The script page, for everyone who may read the script: what it is, its run form, recent runs,
 * webhooks, schedules and versions; Edit, Fork, Archive and Delete for those the server says may.
 */
export function ScriptPage({ workspace, path }: { workspace: string; path: string }) {
  const trpc = useTRPC();
  const script = useQuery({ ...trpc.script.page.queryOptions({ workspace, path }), retry: false });
  const queryClient = useQueryClient();
  // The recent runs and the versions need only the path: asked for with the script (the first
  // render, in the browser) instead of once it has arrived, so the page takes one round trip.
  useState(() => {
    if (typeof window === "undefined") return;
    void queryClient.prefetchQuery(trpc.job.list.queryOptions(recentRunsInput(workspace, path)));
    void queryClient.prefetchQuery(trpc.script.versions.queryOptions({ workspace, path }));
  });
  const [origin, setOrigin] = useState("");
  useEffect(() => setOrigin(window.location.origin), []);

  return (
    <ItemPage
      path={path}
      query={script}
      back={{ href: `/w/${workspace}/scripts`, label: "Scripts" }}
      actions={(data) => (
        <ScriptActions
          workspace={workspace}
          path={data.path}
          archived={data.archived}
          canWrite={data.canWrite}
          canCreate={data.canCreate}
        />
      )}
    >
      {(data) => (
        <>
          <ItemSummary
            noun="script"
            badges={
              <>
                <Badge data-testid="script-language">{data.language}</Badge>
                {data.tag && <Badge tone="accent">tag: {data.tag}</Badge>}
              </>
            }
            summary={data.summary}
            description={data.description}
            deployed={
              <>
                Version <code>{data.hash}</code>, deployed by {data.createdBy} on{" "}
                {new Date(data.createdAt).toLocaleString()}.
              </>
            }
            archived={data.archived}
          >
            <details>
              <summary className="cursor-pointer">Code</summary>
              <pre className="mt-2 max-h-96 overflow-auto" data-testid="script-code">
                <code>{data.content}</code>
              </pre>
            </details>
          </ItemSummary>

          <div className="grid min-w-0 gap-4 lg:grid-cols-2">
            {!data.archived && data.canRun && (
              <ItemSection id="script-run" title="Run">
                <ScriptRunForm key={data.hash} workspace={workspace} path={data.path} schema={data.schema} />
              </ItemSection>
            )}
            <ItemSection id="script-recent-runs" title="Recent runs">
              <RecentRuns workspace={workspace} path={data.path} noun="script" testId="script-runs" />
            </ItemSection>
          </div>

          <div className="grid min-w-0 gap-4 lg:grid-cols-2">
            <ItemSection id="script-webhooks" title="Webhooks">
              <p className="muted m-0">POST to these URLs with a token to run the latest version.</p>
              <dl className="m-0 grid gap-1">
                <dt className="font-semibold">Async (answers with the run id)</dt>
                <dd className="m-0 break-all">
                  <code data-testid="script-webhook-async">{`${origin}/api/w/${workspace}/jobs/run/p/${data.path}`}</code>
                </dd>
                <dt className="font-semibold">Sync (waits for the result)</dt>
                <dd className="m-0 break-all">
                  <code>{`${origin}/api/w/${workspace}/jobs/run_wait_result/p/${data.path}`}</code>
                </dd>
              </dl>
              <Link
                href={`/w/${workspace}/scripts/webhooks/${data.path}`}
                className="inline-flex items-center gap-1"
              >
                <Webhook aria-hidden className="size-4" /> Webhook tokens and examples
              </Link>
            </ItemSection>
            <ItemSection id="script-schedules" title="Schedules">
              {data.schedules.length === 0 ? (
                <p className="muted m-0">No schedule runs this script.</p>
              ) : (
                <ul className="m-0 stack list-none p-0">
                  {data.schedules.map((schedule) => (
                    <li key={schedule.path} className="row flex-wrap items-center">
                      <Link href={`/w/${workspace}/schedules/edit/${schedule.path}`}>{schedule.path}</Link>
                      <code>{schedule.schedule}</code>
                      <span className="muted">{schedule.timezone}</span>
                      {schedule.enabled ? (
                        <Badge tone="ok">enabled</Badge>
                      ) : (
                        <Badge tone="neutral">paused</Badge>
                      )}
                    </li>
                  ))}
                </ul>
              )}
            </ItemSection>
          </div>

          <ScriptVersions workspace={workspace} path={data.path} language={data.language} />
        </>
      )}
    </ItemPage>
  );
}
