"use client";
// The approval page of a suspended flow step: where the `approvalPage` link of
// wmill.getResumeUrls() leads. The signed link is the credential (no sign-in needed unless the
// step asks for it); a signed-in visitor approves as themself. It reads the flow through
// jobs_u/get_flow and decides through jobs_u/resume or jobs_u/cancel, the same signed REST paths
// an approver's script or e-mail link would call.
import type { ArgSchema } from "@millrace/runtime";
import { useQuery, useMutation } from "@tanstack/react-query";
import { Check, X } from "lucide-react";
import Link from "@/components/ui/link";
import { useSearchParams } from "next/navigation";
import { use, useState } from "react";
import { ArgsForm } from "@/components/args-form";
import { flowStepStatus } from "@/components/flow-run/step-status";
import { StatusBadge } from "@/components/status-badge";
import { JsonTree } from "@/components/run/json-tree";
import { Button } from "@/components/ui/button";

interface StepStatus {
  id: string;
  type: string;
  job?: string;
  skipped?: boolean;
}
interface SuspendedFlow {
  job: {
    id: string;
    running: boolean;
    script_path: string | null;
    args: Record<string, unknown>;
    created_by: string;
    raw_flow: { modules?: FlowModule[] };
    flow_status: { modules: StepStatus[] };
  };
  approvers: { resume_id: number; approver: string }[];
}
interface FlowModule {
  id: string;
  summary?: string;
  value: {
    type: string;
    modules?: FlowModule[];
    branches?: { modules?: FlowModule[] }[];
    default?: FlowModule[];
  };
  suspend?: {
    required_events?: number;
    resume_form?: { schema?: Record<string, unknown> };
    hide_cancel?: boolean;
  };
}

/** The step `id` anywhere in the flow (loops and branches included). */
function findModule(modules: FlowModule[] | undefined, id: string): FlowModule | null {
  for (const module of modules ?? []) {
    if (module.id === id) return module;
    const inner =
      findModule(module.value.modules, id) ??
      findModule(module.value.default, id) ??
      (module.value.branches ?? []).map((branch) => findModule(branch.modules, id)).find(Boolean);
    if (inner) return inner;
  }
  return null;
}

/** A resume form's JSON schema as the run form's schema (order: the schema's, else its keys'). */
function formSchema(schema: Record<string, unknown> | undefined): ArgSchema | null {
  const properties = (schema?.properties ?? null) as ArgSchema["properties"] | null;
  if (!properties || Object.keys(properties).length === 0) return null;
  const order = Array.isArray(schema?.order) ? (schema.order as string[]) : Object.keys(properties);
  const required = Array.isArray(schema?.required) ? (schema.required as string[]) : [];
  return { ...(schema as object), properties, order, required } as ArgSchema;
}

async function answer(response: Response): Promise<string> {
  const body = await response.text();
  if (response.ok) return body;
  let message = body;
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string } | string; message?: string };
    message =
      (typeof parsed.error === "object" ? parsed.error?.message : parsed.error) ?? parsed.message ?? body;
  } catch {
    // a plain-text error
  }
  throw new Error(message || `the server answered ${response.status}`);
}

export default function ApprovalPage({
  params,
}: {
  params: Promise<{ workspace: string; id: string; resume_id: string; signature: string }>;
}) {
  const { workspace, id, resume_id: resumeId, signature } = use(params);
  const approver = useSearchParams().get("approver");
  const tail = `${workspace}/${id}/${resumeId}/${signature}${
    approver ? `?approver=${encodeURIComponent(approver)}` : ""
  }`;
  const flow = useQuery({
    queryKey: ["approval", tail],
    queryFn: async () =>
      JSON.parse(
        await answer(await fetch(`/api/w/${tail.replace(/^[^/]+\//, `${workspace}/jobs_u/get_flow/`)}`)),
      ) as SuspendedFlow,
    retry: false,
  });
  const [values, setValues] = useState<Record<string, unknown>>({});
  const decide = useMutation({
    mutationFn: async (cancel: boolean) =>
      answer(
        await fetch(
          `/api/w/${tail.replace(/^[^/]+\//, `${workspace}/jobs_u/${cancel ? "cancel" : "resume"}/`)}`,
          {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(values),
          },
        ),
      ),
    onSettled: () => flow.refetch(),
  });

  const job = flow.data?.job;
  const approvers = flow.data?.approvers ?? [];
  // The top-level step that waits for events (a suspended identity step's link names the flow job).
  const waiting = job?.flow_status.modules.find(
    (step) => step.type === "WaitingForEvents" || (step.job === id && step.type === "InProgress"),
  );
  const module = waiting ? findModule(job?.raw_flow.modules, waiting.id) : null;
  const required = module?.suspend?.required_events ?? 1;
  const schema = formSchema(module?.suspend?.resume_form?.schema);
  const decided = decide.isSuccess;

  return (
    <main className="page-main stack" style={{ maxWidth: 760, margin: "3rem auto" }}>
      <h1>Approval</h1>
      {flow.isPending && <p className="muted">Loading…</p>}
      {flow.error && (
        <p className="error" role="alert">
          This approval link cannot be used: {flow.error.message}
        </p>
      )}
      {job && (
        <>
          <section className="panel stack" aria-labelledby="approval-flow">
            <h2 id="approval-flow" className="m-0 text-base">
              Flow <code>{job.script_path ?? "(not deployed)"}</code>, started by {job.created_by}
            </h2>
            <p className="m-0">
              {waiting ? (
                <>
                  Step <code>{module?.summary || waiting.id}</code> waits for {required} approval
                  {required === 1 ? "" : "s"}; {approvers.length} received
                  {approvers.length > 0 && ` (from ${approvers.map((each) => each.approver).join(", ")})`}.
                </>
              ) : job.running ? (
                "This flow is no longer waiting for this approval."
              ) : (
                "This flow is over."
              )}
            </p>
            <div>
              <h3 className="m-0 mb-1 text-sm">Flow input</h3>
              <JsonTree value={job.args} />
            </div>
            <ol className="m-0 flex flex-wrap gap-2 p-0" aria-label="Steps" style={{ listStyle: "none" }}>
              {job.flow_status.modules.map((step) => (
                <li key={step.id} className="row">
                  <code>{step.id}</code>
                  <StatusBadge
                    status={flowStepStatus(step, { finished: !job.running, suspendedHere: step === waiting })}
                  />
                </li>
              ))}
            </ol>
          </section>
          {waiting && job.running && !decided && (
            <section className="panel stack" aria-labelledby="approval-decision">
              <h2 id="approval-decision" className="m-0 text-base">
                Your decision{approver ? ` (as ${approver})` : ""}
              </h2>
              {schema && (
                <ArgsForm schema={schema} values={values} onChange={setValues} workspace={workspace} />
              )}
              <div className="row">
                <Button variant="primary" disabled={decide.isPending} onClick={() => decide.mutate(false)}>
                  <Check aria-hidden /> Approve
                </Button>
                {!module?.suspend?.hide_cancel && (
                  <Button
                    variant="destructive"
                    disabled={decide.isPending}
                    onClick={() => decide.mutate(true)}
                  >
                    <X aria-hidden /> Deny
                  </Button>
                )}
              </div>
            </section>
          )}
          {decide.error && (
            <p className="error" role="alert">
              {decide.error.message}
            </p>
          )}
          {decided && (
            <p className="panel" role="status" data-testid="approval-done">
              {decide.variables ? "Denied: the flow is canceled." : "Approved. Thank you."}
            </p>
          )}
          <p className="muted">
            Members of the workspace can follow the run at{" "}
            <Link href={`/w/${workspace}/runs/${job.id}`}>its run page</Link>.
          </p>
        </>
      )}
    </main>
  );
}
