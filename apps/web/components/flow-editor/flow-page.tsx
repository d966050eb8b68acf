"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ArgSchema } from "@millrace/runtime";
import { useRouter } from "next/navigation";
import { toast } from "sonner";
import {
  ItemActions,
  ItemPage,
  ItemSection,
  ItemSummary,
  RecentRuns,
  RunForm,
  useOpenStartedRun,
} from "@/components/item-page";
import { Badge } from "@/components/ui/badge";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { FlowGraph } from "./flow-graph";
import { normalizeSchema, withDefaults, type FlowValue } from "./model";

function FlowRunForm({ workspace, path, schema }: { workspace: string; path: string; schema: unknown }) {
  const trpc = useTRPC();
  const run = useMutation(trpc.flow.run.mutationOptions({ onSuccess: useOpenStartedRun(workspace, path) }));
  return (
    <RunForm
      workspace={workspace}
      path={path}
      schema={normalizeSchema(schema) as unknown as ArgSchema}
      run={run}
      args={(values) => withDefaults(schema, values)}
      submitTestId="run-flow"
    />
  );
}

function Versions({ workspace, path }: { workspace: string; path: string }) {
  const trpc = useTRPC();
  const history = useQuery(trpc.flow.history.queryOptions({ workspace, path }));
  if (history.error) return <p className="error">{errorMessage(history.error)}</p>;
  if (!history.data) return <p className="muted">Loading…</p>;
  return (
    <ol className="m-0 stack list-none p-0" data-testid="flow-versions">
      {history.data.map((version) => (
        <li key={version.id} className="row flex-wrap items-center">
          <code>version {version.id}</code>
          <span>
            {new Date(version.created_at).toLocaleString()} by {version.created_by}
          </span>
          {version.deployment_msg && <span className="muted">{version.deployment_msg}</span>}
        </li>
      ))}
    </ol>
  );
}

function FlowActions({ workspace, path, archived }: { workspace: string; path: string; archived: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries(trpc.flow.pathFilter());
  const failed = (error: unknown) => toast.error(errorMessage(error));
  const archive = useMutation(
    trpc.flow.archive.mutationOptions({
      onSuccess: async (_data, input) => {
        toast.success(`${input.archived === false ? "Unarchived" : "Archived"} ${path}`);
        await refresh();
      },
      onError: failed,
    }),
  );
  const remove = useMutation(
    trpc.flow.delete.mutationOptions({
      onSuccess: async () => {
        toast.success(`Deleted ${path}`);
        router.push(`/w/${workspace}/flows`);
        await refresh();
      },
      onError: failed,
    }),
  );
  const busy = archive.isPending || remove.isPending;
  return (
    <ItemActions
      noun="flow"
      path={path}
      editHref={`/w/${workspace}/flows/edit/${path}`}
      archived={archived}
      canWrite
      busy={busy}
      archiveDescription="It can no longer be run. Its versions and runs stay, and you can unarchive it."
      deleteDescription="Every version of the flow is deleted for good. Its past runs stay in the run history."
      onArchive={() => archive.mutate({ workspace, path, archived: true })}
      onUnarchive={() => archive.mutate({ workspace, path, archived: false })}
      onDelete={() => remove.mutate({ workspace, path })}
    />
  );
}

/**
 * The flow page, for everyone who may read the flow: what it is, its graph, its run form, recent
 * runs and versions; Edit, Archive and Delete for those the server says may.
 */
export function FlowPage({ workspace, path }: { workspace: string; path: string }) {
  const trpc = useTRPC();
  const flow = useQuery({ ...trpc.flow.get.queryOptions({ workspace, path }), retry: false });
  return (
    <ItemPage
      path={path}
      query={flow}
      back={{ href: `/w/${workspace}/flows`, label: "Flows" }}
      actions={(data) =>
        data.canWrite && <FlowActions workspace={workspace} path={data.path} archived={data.archived} />
      }
    >
      {(data) => (
        <>
          <ItemSummary
            noun="flow"
            badges={
              <>
                <Badge>flow</Badge>
                <Badge tone="neutral">
                  {data.value.modules.length} step{data.value.modules.length === 1 ? "" : "s"}
                </Badge>
              </>
            }
            summary={data.summary}
            description={data.description}
            deployed={
              <>
                Version {data.versionId}, deployed by {data.editedBy} on{" "}
                {new Date(data.editedAt).toLocaleString()}.
              </>
            }
            archived={data.archived}
          />

          <FlowGraph value={data.value as FlowValue} height={420} label={`Steps of ${data.path}`} />

          <div className="grid min-w-0 gap-4 lg:grid-cols-2">
            {!data.archived && data.canRun && (
              <ItemSection id="flow-run" title="Run">
                <FlowRunForm
                  key={data.versionId}
                  workspace={workspace}
                  path={data.path}
                  schema={data.schema}
                />
              </ItemSection>
            )}
            <ItemSection id="flow-recent-runs" title="Recent runs">
              <RecentRuns
                workspace={workspace}
                path={data.path}
                noun="flow"
                jobKinds="flow"
                testId="flow-runs"
              />
            </ItemSection>
          </div>
          <ItemSection id="flow-versions-section" title="Versions">
            <Versions workspace={workspace} path={data.path} />
          </ItemSection>
        </>
      )}
    </ItemPage>
  );
}
