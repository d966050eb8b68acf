"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Webhook } from "lucide-react";
import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { toast } from "sonner";
import { ArgsForm } from "@/components/args-form";
import { StatusBadge } from "@/components/status-badge";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { ScriptActions } from "./script-actions";
import { ScriptVersions } from "./versions";

const RECENT_RUNS = "10";
const REFRESH_MS = 5000;

type Args = Record<string, unknown>;

function duration(startedAt: string | null, completedAt: string | null): string {
  if (!startedAt) return "—";
  const ms = (completedAt ? new Date(completedAt).getTime() : Date.now()) - new Date(startedAt).getTime();
  if (ms < 1000) return `${Math.max(ms, 0)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function Section({ id, title, children }: { id: string; title: string; children: React.ReactNode }) {
  return (
    <section className="panel stack min-w-0" aria-labelledby={`${id}-title`} data-testid={id}>
      <h2 id={`${id}-title`} className="m-0">
        {title}
      </h2>
      {children}
    </section>
  );
}

function RunForm({ workspace, path, schema }: { workspace: string; path: string; schema: unknown }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [values, setValues] = useState<Args>({});
  const run = useMutation(
    trpc.job.runScript.mutationOptions({
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
        run.mutate({ workspace, path, args: values });
      }}
    >
      <ArgsForm
        workspace={workspace}
        schema={schema as Parameters<typeof ArgsForm>[0]["schema"]}
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
        <Button type="submit" variant="primary" disabled={run.isPending}>
          {run.isPending ? "Starting…" : "Run"}
        </Button>
      </div>
    </form>
  );
}

function RecentRuns({ workspace, path }: { workspace: string; path: string }) {
  const trpc = useTRPC();
  const runs = useQuery({
    ...trpc.job.list.queryOptions({ workspace, script_path_exact: path, per_page: RECENT_RUNS }),
    refetchInterval: REFRESH_MS,
    // Fresh until the next refresh: the page asked for it with the script (no second fetch on mount).
    staleTime: REFRESH_MS,
  });
  if (runs.error) return <p className="error">{errorMessage(runs.error)}</p>;
  if (!runs.data) return <p className="muted">Loading…</p>;
  if (runs.data.length === 0) return <p className="muted m-0">No runs yet.</p>;
  return (
    <>
      <div className="overflow-x-auto">
        <table data-testid="script-runs">
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
        All runs of this script
      </Link>
    </>
  );
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
    void queryClient.prefetchQuery(
      trpc.job.list.queryOptions({ workspace, script_path_exact: path, per_page: RECENT_RUNS }),
    );
    void queryClient.prefetchQuery(trpc.script.versions.queryOptions({ workspace, path }));
  });
  const [origin, setOrigin] = useState("");
  useEffect(() => setOrigin(window.location.origin), []);

  if (script.error) {
    return (
      <div className="stack">
        <h1>{path}</h1>
        <p className="error" role="alert">
          {errorMessage(script.error)}
        </p>
        <Link href={`/w/${workspace}/scripts`}>Back to scripts</Link>
      </div>
    );
  }
  const data = script.data;
  if (!data) return <p className="muted">Loading…</p>;

  return (
    <div className="stack min-w-0">
      <div className="toolbar flex-wrap gap-2">
        <div className="min-w-0">
          <p className="m-0 text-sm">
            <Link href={`/w/${workspace}/scripts`}>Scripts</Link>
          </p>
          <h1 className="m-0 break-all">{data.path}</h1>
        </div>
        <ScriptActions
          workspace={workspace}
          path={data.path}
          archived={data.archived}
          canWrite={data.canWrite}
          canCreate={data.canCreate}
        />
      </div>

      <section className="panel stack" aria-label="About this script" data-testid="script-summary">
        <div className="row flex-wrap items-center">
          <Badge data-testid="script-language">{data.language}</Badge>
          {data.tag && <Badge tone="accent">tag: {data.tag}</Badge>}
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
        <p className="muted m-0" data-testid="script-deployed">
          Version <code>{data.hash}</code>, deployed by {data.createdBy} on{" "}
          {new Date(data.createdAt).toLocaleString()}.
        </p>
        {data.archived && (
          <p className="m-0" role="status">
            This script is archived: it cannot run until it is unarchived.
          </p>
        )}
        <details>
          <summary className="cursor-pointer">Code</summary>
          <pre className="mt-2 max-h-96 overflow-auto" data-testid="script-code">
            <code>{data.content}</code>
          </pre>
        </details>
      </section>

      <div className="grid min-w-0 gap-4 lg:grid-cols-2">
        {!data.archived && data.canRun && (
          <Section id="script-run" title="Run">
            <RunForm key={data.hash} workspace={workspace} path={data.path} schema={data.schema} />
          </Section>
        )}
        <Section id="script-recent-runs" title="Recent runs">
          <RecentRuns workspace={workspace} path={data.path} />
        </Section>
      </div>

      <div className="grid min-w-0 gap-4 lg:grid-cols-2">
        <Section id="script-webhooks" title="Webhooks">
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
        </Section>
        <Section id="script-schedules" title="Schedules">
          {data.schedules.length === 0 ? (
            <p className="muted m-0">No schedule runs this script.</p>
          ) : (
            <ul className="m-0 stack list-none p-0">
              {data.schedules.map((schedule) => (
                <li key={schedule.path} className="row flex-wrap items-center">
                  <Link href={`/w/${workspace}/schedules/edit/${schedule.path}`}>{schedule.path}</Link>
                  <code>{schedule.schedule}</code>
                  <span className="muted">{schedule.timezone}</span>
                  {schedule.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="neutral">paused</Badge>}
                </li>
              ))}
            </ul>
          )}
        </Section>
      </div>

      <ScriptVersions workspace={workspace} path={data.path} language={data.language} />
    </div>
  );
}
