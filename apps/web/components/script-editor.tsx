"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ArgSchema, Language } from "@millrace/runtime";
import {
  FAMILY_LABEL,
  FAMILY_OF,
  detectLanguageFamily,
  languageMismatch,
} from "@millrace/runtime/detect-language";
import dynamic from "next/dynamic";
import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from "react";
import { Group, Panel, Separator } from "react-resizable-panels";
import { toast } from "sonner";
import { ArgsForm } from "@/components/args-form";
import { JobView } from "@/components/job-view";
import { PathField } from "@/components/path-field";
import { DeployConflict, isDeployConflict } from "@/components/workbench/deploy-conflict";
import { Button } from "@/components/ui/button";
import { useConfirm } from "@/components/ui/confirm";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "@/components/ui/tabs";
import {
  cleanCustomizations,
  CustomizeArgs,
  mergeCustomizations,
  type ArgCustomizations,
} from "@/components/workbench/customize-args";
import {
  deploySettings,
  SETTING_FIELDS,
  SettingsPanel,
  settingsOf,
  type DeployedSettings,
  type ScriptSettings,
} from "@/components/workbench/settings-panel";
import { errorField, errorMessage } from "@/lib/errors";
import { pathProblem, type Role } from "@/lib/script-path";
import { useTRPC } from "@/lib/trpc";

const loadCodeEditor = () => import("./code-editor");
// Monaco is the page's largest download (megabytes): it starts with the page instead of once the
// script has arrived and rendered, so the two overlap (the editor page's load: 0.76 of before,
// measured side by side with the previous build).
if (typeof window !== "undefined") void loadCodeEditor();
const CodeEditor = dynamic(loadCodeEditor, {
  ssr: false,
  loading: () => <div className="editor-frame" style={{ height: 460 }} />,
});

const LANGUAGES = ["bun", "deno", "python3", "bash", "postgresql"] as const;

const TEMPLATES: Record<string, string> = {
  bash: 'name="$1"\n\necho "Hello $name"\n',
  python3:
    'def main(name: str = "world", count: int = 1):\n    return {"greeting": f"Hello {name}", "count": count}\n',
  bun: 'export async function main(name: string = "world", count: number = 1) {\n  return { greeting: `Hello ${name}`, count };\n}\n',
  deno: 'export async function main(name: string = "world") {\n  return { greeting: `Hello ${name}` };\n}\n',
  postgresql: "-- $1 name (text) = world\nSELECT 'Hello ' || $1 AS greeting;\n",
};

const UNSAVED_CHANGES = "This script has unsaved changes. Leave without deploying them?";
const DRAFT_DEBOUNCE_MS = 1000;
const WIDE = "(min-width: 1024px)";

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

function useMediaQuery(query: string): boolean {
  return useSyncExternalStore(
    (notify) => {
      const list = window.matchMedia(query);
      list.addEventListener("change", notify);
      return () => list.removeEventListener("change", notify);
    },
    () => window.matchMedia(query).matches,
    () => false,
  );
}

/**
 * While there are unsaved changes: the browser's own prompt on closing or reloading the tab, and a
 * confirmation (the app's dialog) before any link of the app (the sidebar's included) leaves the editor.
 */
function useLeaveGuard(active: boolean) {
  const confirm = useConfirm();
  const router = useRouter();
  useEffect(() => {
    if (!active) return;
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      // Older browsers only prompt when returnValue is set.
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
      // Another site: the page unloads and beforeunload asks.
      if (url.origin !== window.location.origin) return;
      if (url.pathname === window.location.pathname && url.search === window.location.search) return;
      // Capture phase on the document: Next's Link handler (on the React root) never sees it.
      event.preventDefault();
      event.stopPropagation();
      void confirm({
        title: "Leave without deploying?",
        description: `${UNSAVED_CHANGES} Your draft is kept: it comes back when you reopen the script.`,
        action: "Leave",
      }).then((leave) => {
        if (leave) router.push(url.pathname + url.search + url.hash);
      });
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    document.addEventListener("click", onClick, true);
    return () => {
      window.removeEventListener("beforeunload", onBeforeUnload);
      document.removeEventListener("click", onClick, true);
    };
  }, [active, confirm, router]);
}

/** The caller's role in the workspace, from the workspace list (superadmins are admins there). */
function useRole(workspace: string) {
  const trpc = useTRPC();
  const workspaces = useQuery(trpc.workspace.list.queryOptions());
  const role = workspaces.data?.find((w) => w.id === workspace)?.role as Role | undefined;
  return { role, isPending: workspaces.isPending, error: workspaces.error };
}

function readOnlyNote(role: Role | undefined): string {
  return `Your role (${role ?? "unknown"}) can run scripts but not edit them.`;
}

type LoadedScript = {
  path: string;
  summary: string;
  description: string;
  language: string;
  content: string;
  hash: string;
  tag: string | null;
  settings: DeployedSettings;
  argCustomizations: ArgCustomizations | null;
};

/** What a draft keeps: the editor's state as the author left it. */
interface DraftValue {
  path?: string;
  summary?: string;
  language?: string;
  content?: string;
  settings?: Partial<ScriptSettings>;
  customizations?: ArgCustomizations;
}

type Draft = { value: DraftValue; updatedAt: string };

export function ScriptEditor({
  workspace,
  path: existingPath,
  forkOf,
}: {
  workspace: string;
  path?: string;
  /** A new script prefilled with this script's code, language and summary (the script page's Fork). */
  forkOf?: string;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const me = useQuery(trpc.me.queryOptions());
  const access = useRole(workspace);
  const sourcePath = existingPath ?? forkOf;
  const existing = useQuery({
    ...trpc.script.get.queryOptions({ workspace, path: sourcePath ?? "" }),
    enabled: !!sourcePath,
    retry: false,
  });
  // An existing script: the server's answer for this path (role and folder permissions); a new
  // one: the role (the path typed is checked as it is typed, and again at deploy).
  const pathAccess = useQuery({
    ...trpc.script.access.queryOptions({ workspace, path: existingPath ?? "" }),
    enabled: !!existingPath,
    retry: false,
  });
  const roleWrites = access.role === "admin" || access.role === "developer";
  const canWrite = existingPath ? pathAccess.data?.canWrite === true : roleWrites;
  // Whoever may not write a script gets its page (run form, code, versions), never the editor.
  // (Only a script that could be read: a missing or unreadable one says so here instead.)
  const readOnlyExisting = !!existingPath && pathAccess.data?.canWrite === false && !!existing.data;
  useEffect(() => {
    if (readOnlyExisting) router.replace(`/w/${workspace}/scripts/get/${existingPath}`);
  }, [readOnlyExisting, router, workspace, existingPath]);
  // The caller's draft, read afresh each time the editor opens (never from a cache), in the same
  // request as the script itself (no waterfall): a draft is only ever the caller's own.
  const draft = useQuery({
    ...trpc.draft.get.queryOptions({ workspace, path: existingPath ?? "" }),
    enabled: !access.role || roleWrites,
    retry: false,
    staleTime: 0,
    gcTime: 0,
    refetchOnWindowFocus: false,
  });
  const title = existingPath ?? "New script";

  const heading = (
    <div className="toolbar">
      <h1>{title}</h1>
    </div>
  );
  const backToScripts = <Link href={`/w/${workspace}/scripts`}>Back to scripts</Link>;

  if (access.error || me.error) {
    return (
      <div>
        {heading}
        <div className="error">{errorMessage(access.error ?? me.error)}</div>
      </div>
    );
  }
  // A refetch that fails later keeps the loaded script on screen.
  if (existingPath && existing.error && !existing.data) {
    const notFound = (existing.error as { data?: { code?: string } }).data?.code === "NOT_FOUND";
    return (
      <div>
        {heading}
        <div className="panel stack" data-testid="script-not-found">
          {notFound ? (
            <p style={{ margin: 0 }}>Script {existingPath} was not found, or you may not read it.</p>
          ) : (
            <div className="error">{errorMessage(existing.error)}</div>
          )}
          {backToScripts}
        </div>
      </div>
    );
  }
  // A draft that cannot be read is no reason to keep the editor from opening.
  const draftPending = canWrite && draft.isPending && !draft.error;
  if (
    access.isPending ||
    !me.data ||
    (sourcePath && !existing.data) ||
    draftPending ||
    (existingPath && !pathAccess.data) ||
    readOnlyExisting
  ) {
    return (
      <div>
        {heading}
        <p className="muted">Loading…</p>
      </div>
    );
  }
  if (!existingPath && !canWrite) {
    return (
      <div>
        {heading}
        <div className="panel stack" data-testid="read-only-note">
          <p style={{ margin: 0 }}>{readOnlyNote(access.role)}</p>
          {backToScripts}
        </div>
      </div>
    );
  }
  return (
    <LoadedEditor
      workspace={workspace}
      existingPath={existingPath}
      existing={existingPath ? ((existing.data as LoadedScript | undefined) ?? null) : null}
      template={forkOf ? ((existing.data as LoadedScript | undefined) ?? null) : null}
      draft={(draft.data as Draft | null | undefined) ?? null}
      me={{ username: me.data.username, role: access.role! }}
      canWrite={canWrite}
    />
  );
}

function formatTime(iso: string): string {
  const date = new Date(iso);
  const sameDay = date.toDateString() === new Date().toDateString();
  return sameDay ? date.toLocaleTimeString() : date.toLocaleString();
}

function LoadedEditor({
  workspace,
  existingPath,
  existing,
  template,
  draft,
  me,
  canWrite,
}: {
  workspace: string;
  existingPath?: string;
  existing: LoadedScript | null;
  /** A fork's source: its code, language, summary and settings start a new script. */
  template?: LoadedScript | null;
  draft: Draft | null;
  me: { username: string; role: Role };
  canWrite: boolean;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const confirm = useConfirm();
  const wide = useMediaQuery(WIDE);
  const draftPath = existingPath ?? "";
  const restored = draft?.value ?? null;

  // A fork starts from its source (not from a new-script draft) under the forker's own path.
  const source = existing ?? template ?? null;
  const fromDraft = template ? null : restored;
  const [path, setPath] = useState(
    existingPath ??
      fromDraft?.path ??
      (template ? `u/${me.username}/${template.path.split("/").pop()}_fork` : `u/${me.username}/`),
  );
  const [summary, setSummary] = useState(fromDraft?.summary ?? source?.summary ?? "");
  const [language, setLanguage] = useState<string>(fromDraft?.language ?? source?.language ?? "bash");
  const [content, setContent] = useState(
    fromDraft?.content ?? source?.content ?? TEMPLATES[fromDraft?.language ?? "bash"] ?? "",
  );
  const [settings, setSettings] = useState<ScriptSettings>({
    ...settingsOf(source),
    ...(fromDraft?.settings ?? {}),
  });
  const [customizations, setCustomizations] = useState<ArgCustomizations>(
    fromDraft?.customizations ?? source?.argCustomizations ?? {},
  );
  const [restoredAt, setRestoredAt] = useState<string | null>(fromDraft && draft ? draft.updatedAt : null);
  const [draftSavedAt, setDraftSavedAt] = useState<string | null>(null);
  const [deployedHash, setDeployedHash] = useState<string | null>(existing?.hash ?? null);
  const [dirty, setDirty] = useState(!!fromDraft || !!template);
  const [args, setArgs] = useState<Record<string, unknown>>({});
  const [sideTab, setSideTab] = useState("test");
  const [testJobId, setTestJobId] = useState<string | null>(null);
  // Bumped whenever content is replaced from outside the editor (reloaded script, template, draft).
  const [editorGeneration, setEditorGeneration] = useState(0);
  // Counts edits, so that a deploy only clears "unsaved" if nothing changed while it ran.
  const edits = useRef(0);
  const deployedAtEdit = useRef(0);

  function edited() {
    edits.current += 1;
    setDirty(true);
  }

  // A newer version of the script (after a deploy): show it, unless the user is editing.
  const lastLoadedHash = useRef(existing?.hash ?? null);
  useEffect(() => {
    if (!existing || existing.hash === lastLoadedHash.current || dirty) return;
    lastLoadedHash.current = existing.hash;
    setSummary(existing.summary);
    setLanguage(existing.language);
    setContent(existing.content);
    setSettings(settingsOf(existing));
    setCustomizations(existing.argCustomizations ?? {});
    setEditorGeneration((n) => n + 1);
    setDeployedHash(existing.hash);
  }, [existing, dirty]);

  useLeaveGuard(dirty);

  // Drafts: saved a second after the last change, and at once when the editor closes with a
  // change not saved yet (an in-app link, after the leave confirmation).
  const saveDraft = useMutation(
    trpc.draft.save.mutationOptions({ onSuccess: (saved) => setDraftSavedAt(saved.updatedAt) }),
  );
  const unsavedDraft = useRef<DraftValue | null>(null);
  // No draft is saved while a deploy runs (the deploy deletes it; a save landing after would not be).
  const deploying = useRef(false);
  const saveDraftRef = useRef(saveDraft.mutate);
  useEffect(() => {
    saveDraftRef.current = saveDraft.mutate;
  });
  useEffect(() => {
    if (!dirty || !canWrite) {
      unsavedDraft.current = null;
      return;
    }
    const value: DraftValue = { path, summary, language, content, settings, customizations };
    unsavedDraft.current = value;
    const timer = setTimeout(() => {
      if (deploying.current) return;
      unsavedDraft.current = null;
      saveDraftRef.current({ workspace, path: draftPath, value: value as Record<string, unknown> });
    }, DRAFT_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [dirty, canWrite, workspace, draftPath, path, summary, language, content, settings, customizations]);
  useEffect(
    () => () => {
      const value = unsavedDraft.current;
      if (value && !deploying.current)
        saveDraftRef.current({ workspace, path: draftPath, value: value as Record<string, unknown> });
    },
    [workspace, draftPath],
  );

  const discard = useMutation(
    trpc.draft.discard.mutationOptions({
      onSuccess: () => {
        unsavedDraft.current = null;
        setPath(existing?.path ?? `u/${me.username}/`);
        setSummary(existing?.summary ?? "");
        setLanguage(existing?.language ?? "bash");
        setContent(existing?.content ?? TEMPLATES.bash ?? "");
        setSettings(settingsOf(existing));
        setCustomizations(existing?.argCustomizations ?? {});
        setEditorGeneration((n) => n + 1);
        setRestoredAt(null);
        setDraftSavedAt(null);
        setDirty(false);
        deploy.reset();
        toast.success("Draft discarded");
      },
    }),
  );

  const debouncedContent = useDebounced(content, 300);
  const inferred = useQuery(trpc.script.inferSchema.queryOptions({ language, content: debouncedContent }));
  const inferredSchema = (inferred.data?.schema ?? null) as ArgSchema | null;
  const schema = mergeCustomizations(inferredSchema, customizations);
  const tags = useQuery({ ...trpc.worker.customTags.queryOptions({ workspace }), enabled: canWrite });

  const deploy = useMutation(
    trpc.script.deploy.mutationOptions({
      onSettled: () => {
        deploying.current = false;
      },
      onSuccess: async (script) => {
        setDeployedHash(script.hash);
        lastLoadedHash.current = script.hash;
        setRestoredAt(null);
        setDraftSavedAt(null);
        if (edits.current === deployedAtEdit.current) {
          unsavedDraft.current = null;
          setDirty(false);
        }
        toast.success(`Deployed ${script.path}`);
        await queryClient.invalidateQueries(trpc.script.pathFilter());
        if (!existingPath) router.replace(`/w/${workspace}/scripts/edit/${script.path}`);
      },
    }),
  );
  const run = useMutation(
    trpc.job.runScript.mutationOptions({ onSuccess: ({ id }) => router.push(`/w/${workspace}/runs/${id}`) }),
  );
  // A Test's result shows the moment the run finishes: besides the run view (which follows the
  // logs live), one request waits for the run's end and hands the finished run to that view.
  const finishedWait = useRef<AbortController | null>(null);
  useEffect(() => () => finishedWait.current?.abort(), []);
  const deliverWhenFinished = useCallback(
    async (id: string) => {
      finishedWait.current?.abort();
      const controller = new AbortController();
      finishedWait.current = controller;
      try {
        // Outside the batching link: a batch would hold the run view's own reads until the run ends.
        const input = encodeURIComponent(JSON.stringify({ workspace, id }));
        const response = await fetch(`/api/trpc/workbench.finishedRun?input=${input}`, {
          signal: controller.signal,
        });
        if (!response.ok) return;
        const job = ((await response.json()) as { result?: { data?: unknown } }).result?.data;
        if (!job || controller.signal.aborted) return;
        const queryKey = trpc.job.get.queryKey({ workspace, id, withLogs: false });
        await queryClient.cancelQueries({ queryKey });
        queryClient.setQueryData(queryKey, job as never);
      } catch {
        // Aborted, or the wait failed: the run view finds the result by itself.
      }
    },
    [queryClient, trpc, workspace],
  );
  const preview = useMutation(
    trpc.workbench.test.mutationOptions({
      onSuccess: ({ id, job }) => {
        if (job) {
          // Finished already: the run view starts from the finished run, with nothing to fetch.
          finishedWait.current?.abort();
          queryClient.setQueryData(trpc.job.get.queryKey({ workspace, id, withLogs: false }), job as never);
          setTestJobId(id);
          return;
        }
        setTestJobId(id);
        void deliverWhenFinished(id);
      },
    }),
  );

  const deployField = errorField(deploy.error);
  const deployMessage = deploy.error ? errorMessage(deploy.error) : null;
  const settingField = deployField
    ? (SETTING_FIELDS[deployField] ?? (deployField.startsWith("retry.") ? "retryAttempts" : undefined))
    : undefined;
  const customizationError =
    deployField?.startsWith("arg_customizations") && deployMessage
      ? { field: deployField, message: deployMessage }
      : null;
  const clientPathProblem = existingPath ? null : pathProblem(path, me);
  const summaryError = deployField === "summary" ? deployMessage : null;
  const conflict = isDeployConflict(deploy.error);
  const generalDeployError =
    deployMessage &&
    !conflict &&
    deployField !== "path" &&
    deployField !== "summary" &&
    !settingField &&
    !customizationError
      ? deployMessage
      : null;

  // A refused setting or customisation: show the tab that has the field.
  useEffect(() => {
    if (settingField) setSideTab("settings");
    else if (customizationError) setSideTab("arguments");
  }, [settingField, customizationError?.field]);

  const previewField = errorField(preview.error);
  const runField = errorField(run.error);
  const argsErrorField = previewField?.startsWith("args.") ? previewField : runField;
  const argsErrorText = previewField?.startsWith("args.")
    ? errorMessage(preview.error)
    : errorMessage(run.error);
  const canTest = canWrite;

  const test = useCallback(() => {
    if (!canTest) return;
    setSideTab("test");
    // The code as it is now: no wait for the schema, the worker checks the arguments.
    preview.mutate({ workspace, language, content, args });
  }, [canTest, preview, workspace, language, content, args]);

  // Ctrl/⌘-Enter outside the code (the editor has its own binding).
  const testRef = useRef(test);
  useEffect(() => {
    testRef.current = test;
  });
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
      if ((event.target as Element | null)?.closest?.(".monaco-editor")) return;
      event.preventDefault();
      testRef.current();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  /**
   * Untouched template code becomes the new language's template. Code the author wrote stays when
   * it reads as the new language (Bun and Deno share TypeScript); otherwise they choose, since
   * Python kept as main.sh only fails later, in someone else's run.
   */
  async function changeLanguage(next: string) {
    const untouched = content.trim() === "" || Object.values(TEMPLATES).includes(content);
    const family = FAMILY_OF[next as Language];
    const detected = detectLanguageFamily(content);
    let replace = untouched;
    if (!untouched && family !== FAMILY_OF[language as Language] && detected !== family) {
      replace = await confirm({
        title: `Switch to ${next}?`,
        description: `The code in the editor is ${FAMILY_LABEL[detected ?? FAMILY_OF[language as Language]]}, not ${FAMILY_LABEL[family]}: as ${next} it would not run.`,
        action: `Replace with the ${next} template`,
        cancel: "Keep my code",
      });
    }
    if (replace) {
      setContent(TEMPLATES[next] ?? "");
      setEditorGeneration((n) => n + 1);
    }
    setLanguage(next);
    edited();
  }

  function changePath(next: string) {
    setPath(next);
    if (deployField === "path") deploy.reset();
    edited();
  }

  function changeSettings(next: ScriptSettings) {
    setSettings(next);
    if (settingField) deploy.reset();
    edited();
  }

  function changeCustomizations(next: ArgCustomizations) {
    setCustomizations(next);
    if (customizationError) deploy.reset();
    edited();
  }

  /** `parentHash`: the version to replace, when the author chose to overwrite a newer one. */
  async function submit(parentHash: string | null = deployedHash) {
    if (clientPathProblem) return;
    const mismatch = languageMismatch(language as Language, content);
    if (
      mismatch &&
      !(await confirm({
        title: `Deploy ${FAMILY_LABEL[mismatch]} code as ${language}?`,
        description: `This code looks like ${FAMILY_LABEL[mismatch]}, but the script's language is ${language}: its runs would fail. Switch the language, or deploy it anyway.`,
        action: `Deploy as ${language}`,
        destructive: true,
      }))
    )
      return;
    deployedAtEdit.current = edits.current;
    deploying.current = true;
    deploy.mutate({
      workspace,
      path,
      summary,
      language,
      content,
      parentHash,
      ...deploySettings(settings),
      arg_customizations: cleanCustomizations(customizations),
      draftPath: existingPath ? null : "",
    });
  }

  const editor = (
    <CodeEditor
      key={editorGeneration}
      language={language}
      initialValue={content}
      readOnly={!canWrite}
      onRun={test}
      onChange={(next) => (setContent(next), edited())}
    />
  );

  const side = (
    <div className="panel min-w-0" data-testid="workbench-side">
      <Tabs value={sideTab} onValueChange={setSideTab}>
        <TabsList aria-label="Test and settings">
          <TabsTrigger value="test">Test</TabsTrigger>
          <TabsTrigger value="settings">Settings</TabsTrigger>
          <TabsTrigger value="arguments">Arguments</TabsTrigger>
        </TabsList>
        <TabsContent value="test" className="stack">
          {inferred.data?.error && <div className="field-error">{inferred.data.error}</div>}
          <ArgsForm
            schema={schema}
            values={args}
            onChange={setArgs}
            errorField={argsErrorField}
            errorText={argsErrorText}
            workspace={workspace}
          />
          <div className="row">
            {canTest && (
              <Button
                variant="primary"
                type="button"
                data-testid="workbench-test"
                disabled={preview.isPending}
                title="Run the code as it is now, without deploying (Ctrl/⌘-Enter)"
                onClick={test}
              >
                {preview.isPending ? "Starting…" : "Test"}
              </Button>
            )}
            <Button
              type="button"
              disabled={!deployedHash || run.isPending}
              title={deployedHash ? "Run the deployed version" : "Deploy first"}
              onClick={() => run.mutate({ workspace, path: existingPath ?? path, args })}
            >
              Run
            </Button>
            {canTest && <span className="hint">Ctrl/⌘-Enter tests</span>}
          </div>
          {!deployedHash && <span className="muted">Deploy the script to run it from its page.</span>}
          {preview.error && !previewField?.startsWith("args.") && (
            <div className="error" role="alert">
              {errorMessage(preview.error)}
            </div>
          )}
          {run.error && !runField?.startsWith("args.") && (
            <div className="error">{errorMessage(run.error)}</div>
          )}
          <div data-testid="workbench-result" className="min-w-0">
            {testJobId ? (
              <JobView key={testJobId} workspace={workspace} id={testJobId} actions={false} />
            ) : (
              canTest && (
                <p className="muted m-0">
                  Test runs the code in the editor with these arguments; its logs and result show here.
                </p>
              )
            )}
          </div>
        </TabsContent>
        <TabsContent value="settings">
          <SettingsPanel
            settings={settings}
            onChange={changeSettings}
            language={language}
            tags={tags.data?.available ?? []}
            disabled={!canWrite}
            errorFor={(setting) => (setting === settingField ? deployMessage : null)}
          />
        </TabsContent>
        <TabsContent value="arguments">
          <CustomizeArgs
            schema={inferredSchema}
            value={customizations}
            onChange={changeCustomizations}
            disabled={!canWrite}
            error={customizationError}
          />
        </TabsContent>
      </Tabs>
    </div>
  );

  return (
    <div className="min-w-0">
      <div className="toolbar">
        <h1 className="min-w-0 break-all">{existingPath ? existingPath : "New script"}</h1>
        <div className="row">
          {existingPath && <a href={`/w/${workspace}/scripts/webhooks/${existingPath}`}>Webhooks</a>}
          {canWrite && dirty && draftSavedAt && (
            <span className="muted" data-testid="draft-saved">
              Draft saved {formatTime(draftSavedAt)}
            </span>
          )}
          {deployedHash && (
            <span className="muted" data-testid="deployed-hash">
              deployed version <code>{deployedHash}</code>
              {dirty ? " (unsaved changes)" : ""}
            </span>
          )}
          {canWrite && (
            <button
              className="primary"
              type="button"
              disabled={deploy.isPending || !!clientPathProblem}
              title={clientPathProblem ?? undefined}
              onClick={() => void submit()}
            >
              {deploy.isPending ? "Deploying…" : "Deploy"}
            </button>
          )}
        </div>
      </div>
      {restoredAt && (
        <div
          className="panel row"
          role="status"
          data-testid="draft-restored"
          style={{ marginBottom: "1rem", alignItems: "center", justifyContent: "space-between" }}
        >
          <span>Restored your unsaved draft from {formatTime(restoredAt)}.</span>
          <Button
            type="button"
            size="sm"
            disabled={discard.isPending}
            onClick={() => discard.mutate({ workspace, path: draftPath })}
          >
            Discard draft
          </Button>
          {discard.error && <span className="field-error">{errorMessage(discard.error)}</span>}
        </div>
      )}
      {!canWrite && (
        <div className="panel muted" data-testid="read-only-note" style={{ marginBottom: "1rem" }}>
          {readOnlyNote(me.role)}
        </div>
      )}
      <div className="panel row" style={{ marginBottom: "1rem" }}>
        <PathField
          style={{ flex: "2 1 14rem", minWidth: 0 }}
          value={path}
          onChange={changePath}
          problem={clientPathProblem}
          serverError={deployField === "path" ? deployMessage : null}
          disabled={!!existingPath || !canWrite}
        />
        <label style={{ flex: "2 1 14rem", minWidth: 0 }}>
          Summary
          <input
            name="summary"
            value={summary}
            disabled={!canWrite}
            aria-invalid={!!summaryError}
            onChange={(e) => (setSummary(e.target.value), edited())}
          />
          {summaryError && <span className="field-error">{summaryError}</span>}
        </label>
        <label style={{ flex: "1 1 8rem", minWidth: 0 }}>
          Language
          <select
            name="language"
            value={language}
            disabled={!canWrite}
            onChange={(e) => void changeLanguage(e.target.value)}
          >
            {LANGUAGES.map((l) => (
              <option key={l}>{l}</option>
            ))}
          </select>
        </label>
      </div>
      {conflict && (
        <DeployConflict
          workspace={workspace}
          path={existingPath ?? path}
          isNew={!existingPath}
          deploying={deploy.isPending}
          onOverwrite={(latestHash) => void submit(latestHash)}
        />
      )}
      {generalDeployError && (
        <div className="error" role="alert" style={{ marginBottom: "1rem" }}>
          {generalDeployError}
        </div>
      )}
      {wide ? (
        <Group orientation="horizontal" className="min-w-0" data-testid="workbench">
          <Panel id="code" defaultSize="60" minSize={360} className="min-w-0">
            {editor}
          </Panel>
          <Separator
            className="mx-1 w-2 cursor-col-resize rounded bg-line hover:bg-accent focus-visible:bg-accent"
            aria-label="Resize the editor and the test panel"
          />
          <Panel id="side" defaultSize="40" minSize={320} className="min-w-0">
            {side}
          </Panel>
        </Group>
      ) : (
        <div className="stack min-w-0" data-testid="workbench">
          {editor}
          {side}
        </div>
      )}
    </div>
  );
}
