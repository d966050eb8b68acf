"use client";
import { useMutation, useQuery } from "@tanstack/react-query";
import { ArrowDown, ArrowUp, Plus, Trash2, X } from "lucide-react";
import dynamic from "next/dynamic";
import { useEffect, useMemo, useState } from "react";
import type { FieldSchema } from "@/components/run/arg-field";
import { JobView } from "@/components/job-view";
import { JsonTree } from "@/components/run/json-tree";
import { Button } from "@/components/ui/button";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "@/components/ui/tabs";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { AddStepMenu } from "./add-step-menu";
import type { ExpressionContext } from "./expression-editor";
import { ExpressionEditor, InputsForm, type InputArg } from "./inputs-form";
import {
  childLists,
  KIND_LABEL,
  LANGUAGES,
  normalizeSchema,
  TEMPLATES,
  transformsOf,
  type FlowModule,
  type InputTransform,
  type Language,
  type ListPath,
  type StepKind,
} from "./model";
import { StepSettings } from "./step-settings";

const CodeEditor = dynamic(() => import("@/components/code-editor"), {
  ssr: false,
  loading: () => <div className="editor-frame" style={{ height: 320 }} />,
});

const FINISHED = new Set(["success", "failure", "canceled"]);

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

interface Schema {
  order: string[];
  properties: Record<string, FieldSchema>;
  required: string[];
}

function argsOf(schema: Schema | null | undefined): InputArg[] {
  if (!schema) return [];
  return schema.order.map((name) => ({
    name,
    schema: schema.properties[name] ?? {},
    required: schema.required.includes(name),
  }));
}

/** The arguments a step's code or script takes: inferred from inline code, read from a deployed script. */
function useStepArgs(workspace: string, module: FlowModule) {
  const trpc = useTRPC();
  const value = module.value;
  const content = useDebounced(value.type === "rawscript" ? value.content : "", 300);
  const inferred = useQuery({
    ...trpc.script.inferSchema.queryOptions({
      language: value.type === "rawscript" ? value.language : "bash",
      content,
    }),
    enabled: value.type === "rawscript",
  });
  const flowPath = value.type === "flow" ? value.path : "";
  const subflow = useQuery({
    ...trpc.flow.get.queryOptions({ workspace, path: flowPath }),
    enabled: value.type === "flow" && /^[uf]\/[^/]+\/./.test(flowPath),
    retry: false,
  });
  const scriptPath = value.type === "script" ? value.path : "";
  const script = useQuery({
    ...trpc.script.get.queryOptions({ workspace, path: scriptPath }),
    enabled: value.type === "script" && /^[uf]\/[^/]+\/./.test(scriptPath),
    retry: false,
  });
  if (value.type === "rawscript") {
    return { args: argsOf(inferred.data?.schema as Schema | null), problem: inferred.data?.error ?? null };
  }
  if (value.type === "script") {
    if (script.error)
      return { args: [], problem: `The script ${scriptPath} was not found, or you may not read it.` };
    return { args: argsOf(script.data?.schema as Schema | undefined), problem: null };
  }
  if (value.type === "flow") {
    if (subflow.error)
      return { args: [], problem: `The flow ${flowPath} was not found, or you may not read it.` };
    return {
      args: argsOf(subflow.data ? (normalizeSchema(subflow.data.schema) as Schema) : null),
      problem: null,
    };
  }
  return { args: [], problem: null };
}

function parseIter(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export interface StepError {
  field: string;
  message: string;
}

/**
 * The selected step: what it is (code, script path, branches, loop), its inputs, its settings and
 * "Test this step". Every change goes to `onChange` as a new module.
 */
export function StepPanel({
  workspace,
  module,
  modulePath,
  context,
  onChange,
  onRename,
  onRemove,
  onMove,
  onAddInside,
  onSelectLane,
  canMoveUp,
  canMoveDown,
  readOnly,
  error,
  testInput,
  lastResults,
  lastArgs,
  onTested,
}: {
  workspace: string;
  module: FlowModule;
  modulePath: ListPath;
  context: ExpressionContext;
  onChange: (module: FlowModule) => void;
  onRename: (id: string) => string | null;
  onRemove: () => void;
  onMove: (by: -1 | 1) => void;
  onAddInside: (list: ListPath, kind: StepKind, language?: Language) => void;
  onSelectLane: (list: ListPath, label: string) => void;
  canMoveUp: boolean;
  canMoveDown: boolean;
  readOnly: boolean;
  error: StepError | null;
  testInput: Record<string, unknown>;
  lastResults: Record<string, unknown>;
  lastArgs: Record<string, unknown> | null;
  onTested: (result: { args: Record<string, unknown>; result?: unknown; finished: boolean }) => void;
}) {
  const trpc = useTRPC();
  const [tab, setTab] = useState("step");
  const [idText, setIdText] = useState(module.id);
  const [idProblem, setIdProblem] = useState<string | null>(null);
  useEffect(() => {
    setIdText(module.id);
    setIdProblem(null);
  }, [module.id]);
  const value = module.value;
  const { args, problem } = useStepArgs(workspace, module);
  const scripts = useQuery({
    ...trpc.script.list.queryOptions({ workspace, includeArchived: false }),
    enabled: value.type === "script",
  });
  const testable = value.type === "rawscript" || value.type === "script";
  const withInputs = testable || value.type === "flow";
  const flows = useQuery({
    ...trpc.flow.list.queryOptions({ workspace, includeArchived: false }),
    enabled: value.type === "flow",
  });
  const [testJob, setTestJob] = useState<string | null>(null);
  // Inside a loop: the item the test gives as flow_input.iter.value (JSON, or text as it is).
  const [iterText, setIterText] = useState("1");
  const [testedArgs, setTestedArgs] = useState<Record<string, unknown> | null>(null);
  const testStep = useMutation(
    trpc.flow.testStep.mutationOptions({
      onSuccess: ({ id, args: evaluated }) => {
        setTestJob(id);
        setTestedArgs(evaluated);
        onTested({ args: evaluated, finished: false });
      },
    }),
  );
  const testRun = useQuery({
    ...trpc.job.get.queryOptions({ workspace, id: testJob ?? "", withLogs: false }),
    enabled: !!testJob,
    refetchInterval: (q) => (q.state.data && FINISHED.has(q.state.data.status) ? false : 500),
  });
  const testFinished = testRun.data && FINISHED.has(testRun.data.status) ? testRun.data : null;
  useEffect(() => {
    if (testFinished && testedArgs)
      onTested({ args: testedArgs, result: testFinished.result, finished: true });
    // Once per finished test run.
  }, [testFinished?.id, testFinished?.status]);

  const fieldOf = (suffix: string) => {
    if (!error) return null;
    return error.field.includes(suffix) ? error.message : null;
  };
  const lists = useMemo(() => childLists(module, modulePath), [module, modulePath]);
  const setValue = (patch: Record<string, unknown>) =>
    onChange({ ...module, value: { ...value, ...patch } as FlowModule["value"] });

  const testError = testStep.error ? errorMessage(testStep.error) : null;
  const testErrorField = errorField(testStep.error);

  return (
    <section className="stack min-w-0" aria-label={`Step ${module.id}`} data-testid="step-panel">
      <div className="toolbar flex-wrap gap-2">
        <h2 className="m-0 min-w-0 break-all text-base">
          Step <code>{module.id}</code>{" "}
          <span className="muted text-sm font-normal">{KIND_LABEL[value.type] ?? value.type}</span>
        </h2>
        {!readOnly && (
          <div className="row gap-1">
            <Button
              size="icon"
              variant="ghost"
              aria-label="Move step up"
              disabled={!canMoveUp}
              onClick={() => onMove(-1)}
            >
              <ArrowUp aria-hidden />
            </Button>
            <Button
              size="icon"
              variant="ghost"
              aria-label="Move step down"
              disabled={!canMoveDown}
              onClick={() => onMove(1)}
            >
              <ArrowDown aria-hidden />
            </Button>
            <Button size="sm" variant="destructive" onClick={onRemove} data-testid="remove-step">
              <Trash2 aria-hidden /> Remove
            </Button>
          </div>
        )}
      </div>
      {error && (
        <p className="error m-0" role="alert" data-testid="step-error">
          {error.message}
        </p>
      )}
      <Tabs value={tab} onValueChange={setTab}>
        <TabsList aria-label={`Step ${module.id}`} className="flex-wrap">
          <TabsTrigger value="step">Step</TabsTrigger>
          {withInputs && <TabsTrigger value="inputs">Inputs</TabsTrigger>}
          <TabsTrigger value="settings">Settings</TabsTrigger>
          {testable && <TabsTrigger value="test">Test</TabsTrigger>}
        </TabsList>

        <TabsContent value="step" className="stack">
          <div className="row flex-wrap">
            <label className="min-w-32 flex-1">
              Step id
              <input
                name="step-id"
                value={idText}
                disabled={readOnly}
                aria-invalid={!!idProblem}
                onChange={(e) => setIdText(e.target.value)}
                onBlur={() => {
                  if (idText === module.id) return;
                  const refused = onRename(idText);
                  setIdProblem(refused);
                  if (refused) setIdText(module.id);
                }}
              />
              {idProblem && <span className="field-error">{idProblem}</span>}
            </label>
            <label className="min-w-48 flex-[2]">
              Summary
              <input
                name="step-summary"
                value={module.summary ?? ""}
                disabled={readOnly}
                onChange={(e) => onChange({ ...module, summary: e.target.value || undefined })}
              />
            </label>
          </div>

          {value.type === "rawscript" && (
            <>
              <label>
                Language
                <select
                  name="step-language"
                  value={value.language}
                  disabled={readOnly}
                  onChange={(e) => {
                    const language = e.target.value as Language;
                    const unchanged = value.content === TEMPLATES[value.language] || value.content === "";
                    setValue({ language, ...(unchanged ? { content: TEMPLATES[language] } : {}) });
                  }}
                >
                  {LANGUAGES.map((language) => (
                    <option key={language}>{language}</option>
                  ))}
                </select>
              </label>
              <CodeEditor
                key={`${module.id}-${value.language}`}
                language={value.language}
                initialValue={value.content}
                readOnly={readOnly}
                height={320}
                onChange={(content) => setValue({ content })}
              />
              {problem && <p className="field-error m-0">{problem}</p>}
              {fieldOf("content") && <p className="field-error m-0">{fieldOf("content")}</p>}
            </>
          )}

          {value.type === "script" && (
            <label>
              Script path
              <input
                name="step-script-path"
                list={`scripts-${module.id}`}
                value={value.path}
                disabled={readOnly}
                placeholder="f/folder/script"
                aria-invalid={!!fieldOf("path") || !!problem}
                onChange={(e) => setValue({ path: e.target.value })}
              />
              <datalist id={`scripts-${module.id}`}>
                {(scripts.data ?? []).map((script) => (
                  <option key={script.path} value={script.path} />
                ))}
              </datalist>
              {(fieldOf("value.path") ?? problem) && (
                <span className="field-error">{fieldOf("value.path") ?? problem}</span>
              )}
            </label>
          )}

          {value.type === "flow" && (
            <label>
              Flow path
              <input
                name="step-flow-path"
                list={`flows-${module.id}`}
                value={value.path}
                disabled={readOnly}
                placeholder="f/folder/flow"
                aria-invalid={!!fieldOf("value.path") || !!problem}
                onChange={(e) => setValue({ path: e.target.value })}
              />
              <datalist id={`flows-${module.id}`}>
                {(flows.data ?? []).map((flow) => (
                  <option key={flow.path} value={flow.path} />
                ))}
              </datalist>
              {(fieldOf("value.path") ?? problem) && (
                <span className="field-error">{fieldOf("value.path") ?? problem}</span>
              )}
            </label>
          )}

          {value.type === "forloopflow" && (
            <>
              <p className="m-0 text-sm font-semibold">Iterate over</p>
              <ExpressionEditor
                key={`${module.id}-iterator`}
                label="Loop iterator expression"
                value={
                  value.iterator.type === "javascript"
                    ? value.iterator.expr
                    : JSON.stringify(value.iterator.value ?? [])
                }
                onChange={(expr) =>
                  setValue({ iterator: { type: "javascript", expr } satisfies InputTransform })
                }
                context={context}
                readOnly={readOnly}
              />
              <p className="hint m-0">
                An expression giving a list; each iteration sees its item as{" "}
                <code>flow_input.iter.value</code> and its index as <code>flow_input.iter.index</code>.
              </p>
              {fieldOf("iterator") && <p className="field-error m-0">{fieldOf("iterator")}</p>}
            </>
          )}
          {(value.type === "forloopflow" || value.type === "whileloopflow") && (
            <div className="row flex-wrap">
              <label className="flex-row items-center gap-2">
                <input
                  type="checkbox"
                  checked={value.skip_failures}
                  disabled={readOnly}
                  onChange={(e) => setValue({ skip_failures: e.target.checked })}
                />
                Skip failed iterations
              </label>
              <label className="flex-row items-center gap-2">
                <input
                  type="checkbox"
                  checked={!!value.parallel}
                  disabled={readOnly}
                  onChange={(e) => setValue({ parallel: e.target.checked || undefined })}
                />
                Run iterations in parallel
              </label>
              {value.parallel && (
                <label>
                  Parallelism
                  <input
                    type="number"
                    min={1}
                    disabled={readOnly}
                    value={value.parallelism?.type === "static" ? String(value.parallelism.value ?? "") : ""}
                    onChange={(e) =>
                      setValue({
                        parallelism: e.target.value
                          ? { type: "static", value: Number(e.target.value) }
                          : undefined,
                      })
                    }
                  />
                </label>
              )}
            </div>
          )}
          {value.type === "whileloopflow" && (
            <p className="hint m-0">
              The loop runs until the &quot;stop after&quot; condition of its settings is true (at most 1000
              iterations).
            </p>
          )}

          {value.type === "branchone" && (
            <div className="stack">
              <p className="hint m-0">
                The first branch whose condition is true runs; otherwise the default branch.
              </p>
              {value.branches.map((branch, i) => (
                <fieldset key={i} className="m-0 stack min-w-0 rounded-md border border-line p-2">
                  <legend className="px-1 text-sm font-semibold">Branch {i + 1}</legend>
                  <label>
                    Summary
                    <input
                      value={branch.summary ?? ""}
                      disabled={readOnly}
                      onChange={(e) =>
                        setValue({
                          branches: value.branches.map((b, j) =>
                            j === i ? { ...b, summary: e.target.value } : b,
                          ),
                        })
                      }
                    />
                  </label>
                  <ExpressionEditor
                    key={`${module.id}-branch-${i}`}
                    label={`Condition of branch ${i + 1}`}
                    value={branch.expr}
                    onChange={(expr) =>
                      setValue({ branches: value.branches.map((b, j) => (j === i ? { ...b, expr } : b)) })
                    }
                    context={context}
                    readOnly={readOnly}
                  />
                  {fieldOf(`branches[${i}].expr`) && (
                    <span className="field-error">{fieldOf(`branches[${i}].expr`)}</span>
                  )}
                  {!readOnly && (
                    <Button
                      size="sm"
                      variant="ghost"
                      className="self-start"
                      onClick={() => setValue({ branches: value.branches.filter((_, j) => j !== i) })}
                    >
                      <X aria-hidden /> Remove branch {i + 1}
                    </Button>
                  )}
                </fieldset>
              ))}
              {!readOnly && (
                <Button
                  size="sm"
                  className="self-start"
                  onClick={() =>
                    setValue({ branches: [...value.branches, { summary: "", expr: "false", modules: [] }] })
                  }
                >
                  <Plus aria-hidden /> Add branch
                </Button>
              )}
            </div>
          )}

          {value.type === "branchall" && (
            <div className="stack">
              <p className="hint m-0">
                Every branch runs; the step&apos;s result is the list of their results.
              </p>
              <label className="flex-row items-center gap-2">
                <input
                  type="checkbox"
                  checked={!!value.parallel}
                  disabled={readOnly}
                  onChange={(e) => setValue({ parallel: e.target.checked || undefined })}
                />
                Run the branches in parallel
              </label>
              {value.branches.map((branch, i) => (
                <div key={i} className="row flex-wrap items-end">
                  <label className="min-w-32 flex-1">
                    Branch {i + 1} summary
                    <input
                      value={branch.summary ?? ""}
                      disabled={readOnly}
                      onChange={(e) =>
                        setValue({
                          branches: value.branches.map((b, j) =>
                            j === i ? { ...b, summary: e.target.value } : b,
                          ),
                        })
                      }
                    />
                  </label>
                  <label className="flex-row items-center gap-2">
                    <input
                      type="checkbox"
                      checked={!!branch.skip_failure}
                      disabled={readOnly}
                      onChange={(e) =>
                        setValue({
                          branches: value.branches.map((b, j) =>
                            j === i ? { ...b, skip_failure: e.target.checked || undefined } : b,
                          ),
                        })
                      }
                    />
                    Go on if it fails
                  </label>
                  {!readOnly && (
                    <Button
                      size="icon"
                      variant="ghost"
                      aria-label={`Remove branch ${i + 1}`}
                      onClick={() => setValue({ branches: value.branches.filter((_, j) => j !== i) })}
                    >
                      <X aria-hidden />
                    </Button>
                  )}
                </div>
              ))}
              {!readOnly && (
                <Button
                  size="sm"
                  className="self-start"
                  onClick={() => setValue({ branches: [...value.branches, { modules: [] }] })}
                >
                  <Plus aria-hidden /> Add branch
                </Button>
              )}
            </div>
          )}

          {value.type === "identity" && (
            <p className="muted m-0">
              An identity step returns its input (the previous step&apos;s result) as it is.
            </p>
          )}

          {lists.length > 0 && !readOnly && (
            <div className="stack" data-testid="step-lanes">
              <p className="m-0 text-sm font-semibold">Steps inside</p>
              {lists.map((list) => (
                <div key={list.path.join(".")} className="row flex-wrap items-center">
                  <span className="min-w-24">
                    {list.label}{" "}
                    <span className="muted">
                      ({list.modules.length} step{list.modules.length === 1 ? "" : "s"})
                    </span>
                  </span>
                  <AddStepMenu
                    size="sm"
                    label={`Add to ${list.label}`}
                    testId={`add-inside-${list.path.join(".")}`}
                    onAdd={(kind, language) => onAddInside(list.path, kind, language)}
                  />
                  {list.modules.length === 0 && (
                    <Button size="sm" variant="ghost" onClick={() => onSelectLane(list.path, list.label)}>
                      Select
                    </Button>
                  )}
                </div>
              ))}
            </div>
          )}
        </TabsContent>

        {withInputs && (
          <TabsContent value="inputs" className="stack">
            <InputsForm
              stepId={module.id}
              args={args}
              transforms={transformsOf(module)}
              onChange={(input_transforms) => setValue({ input_transforms })}
              context={context}
              lastArgs={lastArgs}
              readOnly={readOnly}
              errorFor={(name) => fieldOf(`input_transforms.${name}`)}
            />
          </TabsContent>
        )}

        <TabsContent value="settings">
          <StepSettings
            module={module}
            onChange={onChange}
            context={context}
            readOnly={readOnly}
            errorFor={(field) => fieldOf(field)}
          />
        </TabsContent>

        {testable && (
          <TabsContent value="test" className="stack">
            <p className="muted m-0">
              Runs this step alone, its inputs evaluated from the flow&apos;s test input and the results of
              the last test run.
            </p>
            {context.inLoop && (
              <label>
                Iteration value <span className="hint">flow_input.iter.value for this test, as JSON</span>
                <input
                  name="test-iter-value"
                  value={iterText}
                  onChange={(event) => setIterText(event.target.value)}
                />
              </label>
            )}
            {!readOnly && (
              <Button
                variant="primary"
                className="self-start"
                data-testid="test-step"
                disabled={testStep.isPending}
                onClick={() =>
                  testStep.mutate({
                    workspace,
                    module,
                    flowInput: testInput,
                    results: lastResults,
                    ...(context.inLoop ? { iter: { value: parseIter(iterText), index: 0 } } : {}),
                  })
                }
              >
                {testStep.isPending ? "Starting…" : "Test this step"}
              </Button>
            )}
            {testError && (
              <p className="error m-0" role="alert">
                {testErrorField ? `${testError}` : testError}
              </p>
            )}
            {testedArgs && (
              <div
                className="overflow-x-auto rounded-md border border-line bg-panel p-2"
                data-testid="test-step-args"
              >
                <p className="m-0 text-sm font-semibold">Inputs</p>
                <JsonTree value={testedArgs} />
              </div>
            )}
            {testJob && (
              <div data-testid="test-step-run" className="min-w-0">
                <JobView key={testJob} workspace={workspace} id={testJob} actions={false} />
              </div>
            )}
          </TabsContent>
        )}
      </Tabs>
    </section>
  );
}
