"use client";
import { useMutation, useQuery } from "@tanstack/react-query";
import { Pencil, RotateCcw } from "lucide-react";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { toast } from "sonner";
import { ArgsForm } from "@/components/args-form";
import { Button } from "@/components/ui/button";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { canWrite, useWorkspaceRole } from "@/lib/workspace-role";
import Link from "@/components/ui/link";

type Args = Record<string, unknown>;

export interface RunActionsJob {
  id: string;
  kind: string;
  scriptPath: string | null;
  args: unknown;
}

function EditAndRun({
  workspace,
  path,
  args,
  onClose,
}: {
  workspace: string;
  path: string;
  args: Args;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const script = useQuery(trpc.script.get.queryOptions({ workspace, path }));
  const [values, setValues] = useState<Args>(args);
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
    <section className="panel stack" aria-labelledby="edit-and-run-title" data-testid="edit-and-run">
      <h2 id="edit-and-run-title" className="m-0">
        Edit and run
      </h2>
      <p className="muted m-0">
        Runs the latest deployed version of <code>{path}</code> with these arguments.
      </p>
      {script.error ? (
        <p className="error">{errorMessage(script.error)}</p>
      ) : !script.data ? (
        <p className="muted">Loading…</p>
      ) : (
        <form
          className="stack"
          onSubmit={(event) => {
            event.preventDefault();
            run.mutate({ workspace, path, args: values });
          }}
        >
          <ArgsForm
            workspace={workspace}
            schema={script.data.schema}
            values={values}
            onChange={setValues}
            errorField={field}
            errorText={errorMessage(run.error)}
          />
          {run.error && !field?.startsWith("args.") && <p className="error">{errorMessage(run.error)}</p>}
          <div className="row">
            <Button type="submit" variant="primary" disabled={run.isPending}>
              {run.isPending ? "Starting…" : "Run"}
            </Button>
            <Button onClick={onClose}>Close</Button>
          </div>
        </form>
      )}
    </section>
  );
}

/**
 * "Run again" (the same arguments) and "Edit and run" (the arguments in the run form first) for a
 * finished or running job. A script job runs the latest deployed version of its path again; a
 * preview job (code that was never deployed) can only run again, as it was. Only shown to those who
 * may run it: everyone in the workspace for scripts, admins and developers for previews.
 */
export function RunActions({ workspace, job }: { workspace: string; job: RunActionsJob }) {
  const trpc = useTRPC();
  const router = useRouter();
  const role = useWorkspaceRole(workspace);
  const [editing, setEditing] = useState(false);
  const again = useMutation(
    trpc.job.runAgain.mutationOptions({
      onSuccess: ({ id }) => {
        toast.success("Started a new run");
        router.push(`/w/${workspace}/runs/${id}`);
      },
    }),
  );
  const isScript = job.kind === "script" && !!job.scriptPath;
  const isPreview = job.kind === "preview";
  const writer = canWrite(role);
  if (!role || !(isScript || (isPreview && writer))) return null;
  // "Edit" reads as changing the script, which an operator may not: operators get the script's
  // own run form (other arguments, the same right) under a name that says so.
  const offerEdit = isScript && writer;
  const args = (job.args && typeof job.args === "object" ? job.args : {}) as Args;
  return (
    <div className="stack">
      <div className="row">
        <Button
          onClick={() => again.mutate({ workspace, id: job.id })}
          disabled={again.isPending}
          data-testid="run-again"
        >
          <RotateCcw aria-hidden /> {again.isPending ? "Starting…" : "Run again"}
        </Button>
        {offerEdit && (
          <Button
            aria-expanded={editing}
            onClick={() => setEditing(!editing)}
            data-testid="edit-and-run-toggle"
          >
            <Pencil aria-hidden /> Edit and run
          </Button>
        )}
        {isScript && !writer && (
          <Link href={`/w/${workspace}/scripts/get/${job.scriptPath}`}>Run with other arguments</Link>
        )}
        <span className="muted text-[13px]">
          {isScript ? (
            <>
              Runs the latest deployed version of <code>{job.scriptPath}</code> with the same arguments.
            </>
          ) : (
            "Runs the same code again with the same arguments (a preview: this code was never deployed)."
          )}
        </span>
      </div>
      {again.error && <p className="error">{errorMessage(again.error)}</p>}
      {editing && offerEdit && (
        <EditAndRun
          workspace={workspace}
          path={job.scriptPath as string}
          args={args}
          onClose={() => setEditing(false)}
        />
      )}
    </div>
  );
}
