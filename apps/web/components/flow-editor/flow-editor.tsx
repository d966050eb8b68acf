"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ArgSchema } from "@millrace/runtime";
import { Play } from "lucide-react";
import dynamic from "next/dynamic";
import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { toast } from "sonner";
import { ArgsForm } from "@/components/args-form";
import { FlowRunSteps } from "@/components/flow-run/flow-run-steps";
import { useFlowRun } from "@/components/flow-run/use-flow-run";
import { PathField } from "@/components/path-field";
import { pathProblem } from "@/lib/script-path";
import { Button } from "@/components/ui/button";
import { useConfirm } from "@/components/ui/confirm";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "@/components/ui/tabs";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { useWorkspaceRole, type WorkspaceRole } from "@/lib/workspace-role";
import { AddStepMenu } from "./add-step-menu";
import type { ExpressionContext } from "./expression-editor";
import { FlowGraph, type GraphSelection } from "./flow-graph";
import {
  allSteps,
  emptyFlow,
  findStep,
  fromYaml,
  getList,
  insertStep,
  insideLoop,
  moveStep,
  newModule,
  nextStepId,
  normalizeSchema,
  removeStep,
  replaceStep,
  stepOfField,
  stepsBefore,
  toYaml,
  type FlowModule,
  type FlowSchema,
  type Language,
  type ListPath,
  type OpenFlow,
  type StepKind,
  withDefaults,
} from "./model";
import { normalizeFlowValue } from "@millrace/core/flow-normalize";
import { SchemaEditor } from "./schema-editor";
import { StepPanel } from "./step-panel";

const YamlEditor = dynamic(() => import("./yaml-editor"), {
  ssr: false,
  loading: () => <div className="editor-frame" style={{ height: 560 }} />,
});

const STEP_ID = /^[A-Za-z0-9_-]+$/;
const UNSAVED = "This flow has unsaved changes. Leave without deploying them?";

/** The browser's prompt on closing the tab, and the app's confirmation before a link leaves the editor. */
function useLeaveGuard(active: boolean) {
  const confirm = useConfirm();
  const router = useRouter();
  useEffect(() => {
    if (!active) return;
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      event.returnValue = "";
    };
    const onClick = (event: MouseEvent) => {
      if (event.defaultPrevented || event.button !== 0) return;
      if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      const anchor = (event.target as Element | null)?.closest?.("a[href]");
      if (!(anchor instanceof HTMLAnchorElement)) return;
      if (anchor.target && anchor.target !== "_self") return;
      if (anchor.hasAttribute("download") || anchor.getAttribute("href")?.startsWith("#")) return;
      const url = new URL(anchor.href, window.location.href);
      if (url.origin !== window.location.origin) return;
      if (url.pathname === window.location.pathname && url.search === window.location.search) return;
      event.preventDefault();
      event.stopPropagation();
      void confirm({ title: "Leave without deploying?", description: UNSAVED, action: "Leave" }).then(
        (leave) => {
          if (leave) router.push(url.pathname + url.search + url.hash);
        },
      );
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    document.addEventListener("click", onClick, true);
    return () => {
      window.removeEventListener("beforeunload", onBeforeUnload);
      document.removeEventListener("click", onClick, true);
    };
  }, [active, confirm, router]);
}

interface LoadedFlow {
  path: string;
  summary: string;
  description: string;
  value: OpenFlow["value"];
  schema: Record<string, unknown> | null;
  versionId: number;
}

/**
 * The flow editor (`/flows/add`, `/flows/edit/<path>`): for those who may write the flow. Anyone
 * else is sent to the flow's page; an operator opening `/flows/add` is told they cannot.
 */
export function FlowEditor({ workspace, path }: { workspace: string; path?: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const role = useWorkspaceRole(workspace);
  const me = useQuery(trpc.me.queryOptions());
  const existing = useQuery({
    ...trpc.flow.get.queryOptions({ workspace, path: path ?? "" }),
    enabled: !!path,
    retry: false,
  });
  const readOnly = !!path && existing.data?.canWrite === false;
  useEffect(() => {
    if (readOnly) router.replace(`/w/${workspace}/flows/get/${path}`);
  }, [readOnly, router, workspace, path]);
  const heading = (
    <div className="toolbar">
      <h1 className="min-w-0 break-all">{path ?? "New flow"}</h1>
    </div>
  );
  const back = <Link href={`/w/${workspace}/flows`}>Back to flows</Link>;
  if (path && existing.error) {
    const notFound = (existing.error as { data?: { code?: string } }).data?.code === "NOT_FOUND";
    return (
      <div>
        {heading}
        <div className="panel stack" data-testid="flow-not-found">
          {notFound ? (
            <p className="m-0">Flow {path} was not found, or you may not read it.</p>
          ) : (
            <p className="error m-0">{errorMessage(existing.error)}</p>
          )}
          {back}
        </div>
      </div>
    );
  }
  if (!role || !me.data || (path && !existing.data) || readOnly) {
    return (
      <div>
        {heading}
        <p className="muted">Loading…</p>
      </div>
    );
  }
  if (!path && role === "operator") {
    return (
      <div>
        {heading}
        <div className="panel stack" data-testid="read-only-note">
          <p className="m-0">Your role (operator) can run flows but not create or edit them.</p>
          {back}
        </div>
      </div>
    );
  }
  return (
    <LoadedFlowEditor
      workspace={workspace}
      existing={path ? (existing.data as LoadedFlow) : null}
      me={{ username: me.data.username, role }}
    />
  );
}

function LoadedFlowEditor({
  workspace,
  existing,
  me,
}: {
  workspace: string;
  existing: LoadedFlow | null;
  me: { username: string; role: WorkspaceRole };
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [flow, setFlow] = useState<OpenFlow>(() =>
    existing
      ? {
          summary: existing.summary,
          ...(existing.description ? { description: existing.description } : {}),
          // Stored as wmill pushed it: ids, input_transforms, … filled in as Windmill reads it.
          value: normalizeFlowValue(existing.value),
          schema: (existing.schema ?? normalizeSchema(null)) as Record<string, unknown>,
        }
      : emptyFlow(),
  );
  const [path, setPath] = useState(existing?.path ?? `u/${me.username}/`);
  const [versionId, setVersionId] = useState<number | null>(existing?.versionId ?? null);
  const [dirty, setDirty] = useState(false);
  const [selection, setSelection] = useState<GraphSelection | null>(null);
  const [view, setView] = useState("graph");
  const [yamlText, setYamlText] = useState("");
  const [yamlGeneration, setYamlGeneration] = useState(0);
  const [yamlError, setYamlError] = useState<string | null>(null);
  const [testArgs, setTestArgs] = useState<Record<string, unknown>>({});
  const [testJobId, setTestJobId] = useState<string | null>(null);
  const [stepResults, setStepResults] = useState<Record<string, unknown>>({});
  const [stepArgs, setStepArgs] = useState<Record<string, Record<string, unknown>>>({});
  const [warnings, setWarnings] = useState<{ field: string; message: string }[]>([]);
  const edits = useRef(0);
  const deployedAt = useRef(0);
  useLeaveGuard(dirty);

  const value = flow.value;
  const schema = useMemo(() => normalizeSchema(flow.schema), [flow.schema]);

  const change = useCallback((next: OpenFlow) => {
    edits.current += 1;
    setFlow(next);
    setDirty(true);
  }, []);
  const changeValue = (next: OpenFlow["value"]) => change({ ...flow, value: next });

  const testRun = useFlowRun(workspace, testJobId);
  const runState = testRun.state;
  // The last results: a flow test's, with single-step tests on top.
  const lastResults = useMemo(
    () => ({ ...(runState?.results ?? {}), ...stepResults }),
    [runState?.results, stepResults],
  );
  const lastArgs = useMemo(
    () => ({ ...((runState?.args ?? {}) as Record<string, Record<string, unknown>>), ...stepArgs }),
    [runState?.args, stepArgs],
  );

  const deploy = useMutation(
    trpc.flow.update.mutationOptions({
      onSuccess: (saved) => afterDeploy(saved),
    }),
  );
  const create = useMutation(
    trpc.flow.create.mutationOptions({
      onSuccess: (saved) => afterDeploy(saved),
    }),
  );
  async function afterDeploy(saved: {
    path: string;
    versionId: number;
    warnings: { field: string; message: string }[];
  }) {
    setVersionId(saved.versionId);
    setWarnings(saved.warnings);
    if (edits.current === deployedAt.current) setDirty(false);
    toast.success(`Deployed ${saved.path}`);
    await queryClient.invalidateQueries(trpc.flow.pathFilter());
    if (!existing) router.replace(`/w/${workspace}/flows/edit/${saved.path}`);
  }
  const saving = deploy.isPending || create.isPending;
  const deployError = deploy.error ?? create.error;
  const deployField = errorField(deployError);
  const deployMessage = deployError ? errorMessage(deployError) : null;
  const errorStep = deployError ? stepOfField(value, deployField) : null;
  const stepErrors = useMemo(
    () => (errorStep && deployMessage ? { [errorStep]: deployMessage } : undefined),
    [errorStep, deployMessage],
  );
  const clientPathProblem = existing ? null : (pathProblem(path, me)?.replaceAll("script", "flow") ?? null);
  const generalError = deployMessage && !errorStep && deployField !== "path" ? deployMessage : null;

  // A refused step: select it, so that its panel shows the error beside the field.
  useEffect(() => {
    if (errorStep) {
      setSelection({ kind: "step", id: errorStep });
      setView("graph");
    }
  }, [errorStep, deployError]);

  function submit() {
    if (clientPathProblem) return;
    deployedAt.current = edits.current;
    deploy.reset();
    create.reset();
    const document = {
      workspace,
      path,
      summary: flow.summary ?? "",
      description: flow.description ?? "",
      value: flow.value,
      schema: flow.schema ?? null,
    };
    if (existing) deploy.mutate({ ...document, parentVersion: versionId });
    else create.mutate(document);
  }

  const runPreview = useMutation(
    trpc.flow.runPreview.mutationOptions({
      onSuccess: ({ id }) => {
        setStepResults({});
        setStepArgs({});
        setTestJobId(id);
      },
    }),
  );
  const testInput = useMemo(() => withDefaults(schema, testArgs), [schema, testArgs]);
  const testFlow = () =>
    runPreview.mutate({ workspace, value: flow.value, args: testInput, path: existing?.path ?? null });

  function addStep(kind: StepKind, language?: Language, into?: ListPath) {
    const id = nextStepId(value);
    const module = newModule(kind, id, language);
    let list: ListPath = ["modules"];
    let index: number | undefined;
    if (into) list = into;
    else if (selection?.kind === "lane") list = selection.path;
    else if (selection?.kind === "input") index = 0;
    else if (selection?.kind === "step") {
      const found = findStep(value, selection.id);
      if (found && found.list[0] !== "failure_module") {
        list = found.list;
        index = found.index + 1;
      }
    }
    changeValue(insertStep(value, list, module, index));
    setSelection({ kind: "step", id });
  }

  const selectedStep = selection?.kind === "step" ? findStep(value, selection.id) : null;
  const context: ExpressionContext | null = useMemo(() => {
    if (!selectedStep) return null;
    const id = selectedStep.module.id;
    return {
      inputs: schema.order,
      steps: stepsBefore(value, id).map((step) => ({ id: step, result: lastResults[step] })),
      inLoop: insideLoop(value, id),
    };
  }, [selectedStep, schema.order, value, lastResults]);

  function renameStep(id: string, next: string): string | null {
    if (!STEP_ID.test(next)) return "Use letters, digits, _ and - for a step id.";
    if (allSteps(value).some((step) => step.module.id === next))
      return `Another step already has the id ${next}.`;
    const found = findStep(value, id);
    if (!found) return null;
    changeValue(replaceStep(value, id, { ...found.module, id: next }));
    setSelection({ kind: "step", id: next });
    return null;
  }

  const confirm = useConfirm();
  async function remove(id: string) {
    const ok = await confirm({
      title: `Remove step ${id}?`,
      description: "The step and every step inside it leave the flow (deploy to make it final).",
      action: "Remove step",
      destructive: true,
    });
    if (!ok) return;
    changeValue(removeStep(value, id));
    setSelection(null);
  }

  const onSelect = useCallback((next: GraphSelection) => setSelection(next), []);

  const statuses = runState?.statuses;

  let panel: React.ReactNode;
  if (selectedStep && context) {
    const list = getList(value, selectedStep.list);
    panel = (
      <StepPanel
        key={selectedStep.module.id}
        workspace={workspace}
        module={selectedStep.module}
        modulePath={[...selectedStep.list, selectedStep.index]}
        context={context}
        onChange={(module: FlowModule) => changeValue(replaceStep(value, selectedStep.module.id, module))}
        onRename={(next) => renameStep(selectedStep.module.id, next)}
        onRemove={() => void remove(selectedStep.module.id)}
        onMove={(by) => changeValue(moveStep(value, selectedStep.module.id, by))}
        onAddInside={(into, kind, language) => addStep(kind, language, into)}
        onSelectLane={(lanePath, label) => setSelection({ kind: "lane", path: lanePath, label })}
        canMoveUp={selectedStep.list[0] !== "failure_module" && selectedStep.index > 0}
        canMoveDown={selectedStep.list[0] !== "failure_module" && selectedStep.index < list.length - 1}
        readOnly={false}
        error={
          errorStep === selectedStep.module.id && deployMessage
            ? { field: deployField ?? "", message: deployMessage }
            : null
        }
        testInput={testInput}
        lastResults={lastResults}
        lastArgs={(lastArgs[selectedStep.module.id] as Record<string, unknown> | undefined) ?? null}
        onTested={({ args, result, finished }) => {
          const id = selectedStep.module.id;
          setStepArgs((current) => ({ ...current, [id]: args }));
          if (finished) setStepResults((current) => ({ ...current, [id]: result }));
        }}
      />
    );
  } else if (selection?.kind === "lane") {
    panel = (
      <section className="stack" aria-label={selection.label} data-testid="lane-panel">
        <h2 className="m-0 text-base">{selection.label}</h2>
        <p className="muted m-0">This branch or loop has no step yet.</p>
        <AddStepMenu
          label={`Add a step to ${selection.label}`}
          testId="add-to-lane"
          onAdd={(kind, language) => addStep(kind, language, selection.path)}
        />
      </section>
    );
  } else {
    panel = (
      <section className="stack" aria-label="Flow input" data-testid="input-panel">
        <h2 className="m-0 text-base">Flow input</h2>
        <p className="muted m-0">
          What the flow takes when it runs. Steps read it as <code>flow_input.&lt;name&gt;</code>.
        </p>
        <SchemaEditor
          schema={schema}
          onChange={(next: FlowSchema) =>
            change({ ...flow, schema: next as unknown as Record<string, unknown> })
          }
        />
      </section>
    );
  }

  return (
    <div className="stack min-w-0">
      <div className="toolbar flex-wrap gap-2">
        <div className="min-w-0">
          <p className="m-0 text-sm">
            <Link href={`/w/${workspace}/flows`}>Flows</Link>
          </p>
          <h1 className="m-0 min-w-0 break-all">{existing ? existing.path : "New flow"}</h1>
        </div>
        <div className="row flex-wrap items-center">
          {existing && <Link href={`/w/${workspace}/flows/get/${existing.path}`}>Flow page</Link>}
          {versionId !== null && (
            <span className="muted" data-testid="flow-version">
              version {versionId}
              {dirty ? " (unsaved changes)" : ""}
            </span>
          )}
          {versionId === null && dirty && <span className="muted">not deployed</span>}
          <Button
            variant="primary"
            data-testid="deploy-flow"
            disabled={saving || !!clientPathProblem}
            title={clientPathProblem ?? undefined}
            onClick={submit}
          >
            {saving ? "Deploying…" : "Deploy"}
          </Button>
        </div>
      </div>

      <div className="panel row flex-wrap">
        <PathField
          className="min-w-0 flex-[2_1_14rem]"
          value={path}
          onChange={(next) => {
            setPath(next);
            setDirty(true);
          }}
          problem={clientPathProblem}
          serverError={deployField === "path" ? deployMessage : null}
          disabled={!!existing}
        />
        <label className="min-w-0 flex-[2_1_14rem]">
          Summary
          <input
            name="summary"
            value={flow.summary ?? ""}
            onChange={(e) => change({ ...flow, summary: e.target.value })}
          />
        </label>
        <label className="min-w-0 flex-[3_1_20rem]">
          Description
          <input
            name="description"
            value={flow.description ?? ""}
            onChange={(e) => change({ ...flow, description: e.target.value || undefined })}
          />
        </label>
      </div>
      {generalError && (
        <p className="error m-0" role="alert" data-testid="deploy-error">
          {generalError}
        </p>
      )}
      {warnings.length > 0 && (
        <div
          className="m-0 rounded-[5px] border border-warn bg-warn-bg px-3 py-2 text-warn"
          role="status"
          data-testid="deploy-warnings"
        >
          <p className="m-0">Deployed, but these steps will fail when they run:</p>
          <ul className="m-0 pl-5">
            {warnings.map((warning) => (
              <li key={warning.field}>{warning.message}</li>
            ))}
          </ul>
        </div>
      )}

      <Tabs
        value={view}
        onValueChange={(next) => {
          if (next === "yaml") {
            setYamlText(toYaml(flow));
            setYamlGeneration((n) => n + 1);
            setYamlError(null);
          }
          setView(next);
        }}
      >
        <TabsList aria-label="Flow views">
          <TabsTrigger value="graph">Graph</TabsTrigger>
          <TabsTrigger value="yaml">YAML</TabsTrigger>
        </TabsList>
        <TabsContent value="graph" className="stack min-w-0">
          <div className="row flex-wrap items-center">
            <AddStepMenu onAdd={(kind, language) => addStep(kind, language)} />
            <span className="hint">
              {selection?.kind === "step"
                ? `Adds after step ${selection.id}`
                : selection?.kind === "lane"
                  ? `Adds to ${selection.label}`
                  : selection?.kind === "input"
                    ? "Adds as the first step"
                    : "Adds at the end of the flow"}
            </span>
          </div>
          <div className="grid min-w-0 gap-4 lg:grid-cols-2">
            <FlowGraph
              value={value}
              selected={selection}
              onSelect={onSelect}
              statuses={statuses}
              errors={stepErrors}
              height={620}
            />
            <div className="panel min-w-0" data-testid="flow-side">
              {panel}
            </div>
          </div>
        </TabsContent>
        <TabsContent value="yaml" className="stack min-w-0">
          <p className="muted m-0">
            The same flow in Windmill&apos;s flow.yaml format. Edits here change the graph as soon as they
            parse.
          </p>
          <YamlEditor
            key={yamlGeneration}
            initialValue={yamlText}
            onChange={(text) => {
              try {
                const parsed = fromYaml(text);
                setYamlError(null);
                change(parsed);
              } catch (error) {
                setYamlError(errorMessage(error));
              }
            }}
          />
          {yamlError && (
            <p className="error m-0" role="alert" data-testid="yaml-error">
              {yamlError}
            </p>
          )}
        </TabsContent>
      </Tabs>

      <section className="panel stack min-w-0" aria-labelledby="flow-test-title" data-testid="flow-test">
        <h2 id="flow-test-title" className="m-0">
          Test the flow
        </h2>
        <p className="muted m-0">Runs the flow as it is in the editor, without deploying it.</p>
        <ArgsForm
          workspace={workspace}
          schema={schema as unknown as ArgSchema}
          values={testArgs}
          onChange={setTestArgs}
          errorField={errorField(runPreview.error)}
          errorText={errorMessage(runPreview.error)}
        />
        <div className="row">
          <Button
            variant="primary"
            data-testid="test-flow"
            disabled={runPreview.isPending}
            onClick={testFlow}
          >
            <Play aria-hidden /> {runPreview.isPending ? "Starting…" : "Test flow"}
          </Button>
          {testJobId && (
            <Link href={`/w/${workspace}/runs/${testJobId}`} data-testid="test-run-link">
              Open the test run
            </Link>
          )}
        </div>
        {runPreview.error && !errorField(runPreview.error)?.startsWith("args.") && (
          <p className="error m-0" role="alert" data-testid="test-flow-error">
            {errorMessage(runPreview.error)}
          </p>
        )}
        {testRun.query.error && <p className="error m-0">{errorMessage(testRun.query.error)}</p>}
        {runState && <FlowRunSteps state={runState} />}
      </section>
    </div>
  );
}
