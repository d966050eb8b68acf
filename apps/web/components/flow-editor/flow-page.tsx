"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ArgSchema } from "@millrace/runtime";
import { Archive, ArchiveRestore, Pencil, Trash2 } from "lucide-react";
import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { useState, type ReactNode } from "react";
import { toast } from "sonner";
import { ArgsForm } from "@/components/args-form";
import { StatusBadge } from "@/components/status-badge";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { useConfirm } from "@/components/ui/confirm";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { FlowGraph } from "./flow-graph";
import { normalizeSchema, withDefaults, type FlowValue } from "./model";

const RECENT_RUNS = "10";
const REFRESH_MS = 5000;

function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section className="panel stack min-w-0" aria-labelledby={`${id}-title`} data-testid={id}>
      <h2 id={`${id}-title`} className="m-0">
        {title}
      </h2>
      {children}
    </section>
  );
}

function duration(startedAt: string | null, completedAt: string | null): string {
  if (!startedAt) return "—";
  const ms = (completedAt ? new Date(completedAt).getTime() : Date.now()) - new Date(startedAt).getTime();
  return ms < 1000 ? `${Math.max(ms, 0)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function RunForm({ workspace, path, schema }: { workspace: string; path: string; schema: unknown }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [values, setValues] = useState<Record<string, unknown>>({});
  const run = useMutation(
    trpc.flow.run.mutationOptions({
      onSuccess: ({ id }) => {
        toast.success(`Started a run of ${path}`);
        router.push(`/w/${workspace}/runs/${id}`);
      },
    }),
  );
  const field = errorField(run.error);
  return (
    <form
      className="stack"
      aria-label={`Run ${path}`}
      onSubmit={(event) => {
        event.preventDefault();
        run.mutate({ workspace, path, args: withDefaults(schema, values) });
      }}
    >
      <ArgsForm
        workspace={workspace}
        schema={normalizeSchema(schema) as unknown as ArgSchema}
        values={values}
        onChange={setValues}
        errorField={field}
        errorText={errorMessage(run.error)}
      />
      {run.error && !field?.startsWith("args.") && (
        <p className="error" role="alert">
          {errorMessage(run.error)}
        </p>
      )}
      <div className="row">
        <Button type="submit" variant="primary" disabled={run.isPending} data-testid="run-flow">
          {run.isPending ? "Starting…" : "Run"}
        </Button>
      </div>
    </form>
  );
}

function RecentRuns({ workspace, path }: { workspace: string; path: string }) {
  const trpc = useTRPC();
  const runs = useQuery({
    ...trpc.job.list.queryOptions({
      workspace,
      script_path_exact: path,
      job_kinds: "flow",
      per_page: RECENT_RUNS,
    }),
    refetchInterval: REFRESH_MS,
  });
  if (runs.error) return <p className="error">{errorMessage(runs.error)}</p>;
  if (!runs.data) return <p className="muted">Loading…</p>;
  if (runs.data.length === 0) return <p className="muted m-0">No runs yet.</p>;
  return (
    <>
      <div className="overflow-x-auto">
        <table data-testid="flow-runs">
          <thead>
            <tr>
              <th>Status</th>
              <th>Started</th>
              <th>Duration</th>
              <th>By</th>
              <th>Run</th>
            </tr>
          </thead>
          <tbody>
            {runs.data.map((job) => (
              <tr key={job.id}>
                <td>
                  <StatusBadge status={job.status} />
                </td>
                <td>{new Date(job.startedAt ?? job.createdAt).toLocaleString()}</td>
                <td>{duration(job.startedAt, job.completedAt)}</td>
                <td>{job.schedulePath ? `schedule ${job.schedulePath}` : job.createdBy}</td>
                <td>
                  <Link href={`/w/${workspace}/runs/${job.id}`}>
                    <code>{job.id.slice(0, 8)}</code>
                  </Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Link href={`/w/${workspace}/runs?script_path_exact=${encodeURIComponent(path)}`}>
        All runs of this flow
      </Link>
    </>
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
  const confirm = useConfirm();
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
    <div className="row flex-wrap" role="group" aria-label="Flow actions">
      {!archived && (
        <Button asChild variant="primary">
          <Link href={`/w/${workspace}/flows/edit/${path}`}>
            <Pencil aria-hidden /> Edit
          </Link>
        </Button>
      )}
      {!archived ? (
        <Button
          disabled={busy}
          onClick={async () => {
            const ok = await confirm({
              title: `Archive ${path}?`,
              description: "It can no longer be run. Its versions and runs stay, and you can unarchive it.",
              action: "Archive flow",
            });
            if (ok) archive.mutate({ workspace, path, archived: true });
          }}
        >
          <Archive aria-hidden /> Archive
        </Button>
      ) : (
        <Button disabled={busy} onClick={() => archive.mutate({ workspace, path, archived: false })}>
          <ArchiveRestore aria-hidden /> Unarchive
        </Button>
      )}
      <Button
        variant="destructive"
        disabled={busy}
        onClick={async () => {
          const ok = await confirm({
            title: `Delete ${path}?`,
            description:
              "Every version of the flow is deleted for good. Its past runs stay in the run history.",
            action: "Delete flow",
            destructive: true,
          });
          if (ok) remove.mutate({ workspace, path });
        }}
      >
        <Trash2 aria-hidden /> Delete
      </Button>
    </div>
  );
}

/**
 * The flow page, for everyone who may read the flow: what it is, its graph, its run form, recent
 * runs and versions; Edit, Archive and Delete for those the server says may.
 */
export function FlowPage({ workspace, path }: { workspace: string; path: string }) {
  const trpc = useTRPC();
  const flow = useQuery({ ...trpc.flow.get.queryOptions({ workspace, path }), retry: false });
  if (flow.error) {
    return (
      <div className="stack">
        <h1 className="break-all">{path}</h1>
        <p className="error" role="alert">
          {errorMessage(flow.error)}
        </p>
        <Link href={`/w/${workspace}/flows`}>Back to flows</Link>
      </div>
    );
  }
  const data = flow.data;
  if (!data) return <p className="muted">Loading…</p>;
  return (
    <div className="stack min-w-0">
      <div className="toolbar flex-wrap gap-2">
        <div className="min-w-0">
          <p className="m-0 text-sm">
            <Link href={`/w/${workspace}/flows`}>Flows</Link>
          </p>
          <h1 className="m-0 break-all">{data.path}</h1>
        </div>
        {data.canWrite && <FlowActions workspace={workspace} path={data.path} archived={data.archived} />}
      </div>

      <section className="panel stack" aria-label="About this flow" data-testid="flow-summary">
        <div className="row flex-wrap items-center">
          <Badge>flow</Badge>
          <Badge tone="neutral">
            {data.value.modules.length} step{data.value.modules.length === 1 ? "" : "s"}
          </Badge>
          {data.archived && (
            <Badge tone="warn" data-testid="archived-badge">
              archived
            </Badge>
          )}
        </div>
        {data.summary ? <p className="m-0 text-base font-semibold">{data.summary}</p> : null}
        {data.description ? (
          <p className="m-0 whitespace-pre-wrap">{data.description}</p>
        ) : (
          !data.summary && <p className="muted m-0">No summary or description.</p>
        )}
        <p className="muted m-0" data-testid="flow-deployed">
          Version {data.versionId}, deployed by {data.editedBy} on {new Date(data.editedAt).toLocaleString()}.
        </p>
        {data.archived && (
          <p className="m-0" role="status">
            This flow is archived: it cannot run until it is unarchived.
          </p>
        )}
      </section>

      <FlowGraph value={data.value as FlowValue} height={420} label={`Steps of ${data.path}`} />

      <div className="grid min-w-0 gap-4 lg:grid-cols-2">
        {!data.archived && data.canRun && (
          <Section id="flow-run" title="Run">
            <RunForm key={data.versionId} workspace={workspace} path={data.path} schema={data.schema} />
          </Section>
        )}
        <Section id="flow-recent-runs" title="Recent runs">
          <RecentRuns workspace={workspace} path={data.path} />
        </Section>
      </div>
      <Section id="flow-versions-section" title="Versions">
        <Versions workspace={workspace} path={data.path} />
      </Section>
    </div>
  );
}
