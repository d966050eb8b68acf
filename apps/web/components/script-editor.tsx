"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { ArgsForm } from "./args-form";

const CodeEditor = dynamic(() => import("./code-editor"), {
  ssr: false,
  loading: () => <div className="editor-frame" style={{ height: 460 }} />,
});

const LANGUAGES = ["bash", "python3", "bun", "deno"] as const;

const TEMPLATES: Record<string, string> = {
  bash: 'name="$1"\n\necho "Hello $name"\n',
  python3:
    'def main(name: str = "world", count: int = 1):\n    return {"greeting": f"Hello {name}", "count": count}\n',
  bun: 'export async function main(name: string = "world", count: number = 1) {\n  return { greeting: `Hello ${name}`, count };\n}\n',
  deno: 'export async function main(name: string = "world") {\n  return { greeting: `Hello ${name}` };\n}\n',
};

const UNSAVED_CHANGES = "This script has unsaved changes. Leave without deploying them?";
const SEGMENT = /^[A-Za-z0-9_-]+$/;
const MAX_PATH_LENGTH = 255;

type Role = "admin" | "developer" | "operator";

/**
 * What is wrong with a path the caller is about to deploy to, as a sentence for the field, or null.
 * The same rules as the server (packages/core paths.ts and access.ts), checked before any request.
 */
export function pathProblem(path: string, me: { username: string; role: Role }): string | null {
  if (path === "")
    return `Give the script a path, such as u/${me.username}/my_script or f/<folder>/my_script.`;
  if (path.length > MAX_PATH_LENGTH)
    return `Keep the path to ${MAX_PATH_LENGTH} characters or fewer (it has ${path.length}).`;
  const segments = path.split("/");
  const [kind, owner, ...rest] = segments;
  if (kind !== "u" && kind !== "f")
    return `Start the path with u/${me.username}/ (your own scripts) or f/<folder>/ (a folder's).`;
  if (!owner) {
    return kind === "u"
      ? `Name the user after u/, then the script: u/${me.username}/my_script.`
      : "Name the folder after f/, then the script: f/<folder>/my_script.";
  }
  if (rest.length === 0 || segments[segments.length - 1] === "")
    return `Give the script a name after ${rest.length === 0 ? `${path}/` : path}.`;
  if (segments.some((segment) => segment === ""))
    return "Remove the empty part between two slashes (//) from the path.";
  const bad = segments.find((segment) => !SEGMENT.test(segment));
  if (bad !== undefined)
    return `Use only letters, digits, _ and - between the slashes ("${bad}" has other characters).`;
  if (kind === "u" && owner !== me.username && me.role !== "admin")
    return `Scripts under u/${owner}/ belong to ${owner}: save yours under u/${me.username}/ or in a folder you can write to.`;
  return null;
}

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

/**
 * While there are unsaved changes: the browser's own prompt on closing or reloading the tab, and a
 * confirmation before any link of the app (the sidebar's included) leaves the editor.
 */
function useLeaveGuard(active: boolean) {
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
      if (!window.confirm(UNSAVED_CHANGES)) {
        // Capture phase on the document: Next's Link handler (on the React root) never sees it.
        event.preventDefault();
        event.stopPropagation();
      }
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    document.addEventListener("click", onClick, true);
    return () => {
      window.removeEventListener("beforeunload", onBeforeUnload);
      document.removeEventListener("click", onClick, true);
    };
  }, [active]);
}

/** The caller's role in the workspace, from the workspace list (superadmins are admins there). */
function useRole(workspace: string) {
  const trpc = useTRPC();
  const workspaces = useQuery(trpc.workspace.list.queryOptions());
  const role = workspaces.data?.find((w) => w.id === workspace)?.role as Role | undefined;
  return { role, isPending: workspaces.isPending, error: workspaces.error };
}

export function useCanWriteScripts(workspace: string): boolean {
  const { role } = useRole(workspace);
  return role === "admin" || role === "developer";
}

function readOnlyNote(role: Role | undefined): string {
  return `Your role (${role ?? "unknown"}) can run scripts but not edit them.`;
}

export function ScriptEditor({ workspace, path: existingPath }: { workspace: string; path?: string }) {
  const trpc = useTRPC();
  const me = useQuery(trpc.me.queryOptions());
  const access = useRole(workspace);
  const existing = useQuery({
    ...trpc.script.get.queryOptions({ workspace, path: existingPath ?? "" }),
    enabled: !!existingPath,
    retry: false,
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
  if (access.isPending || !me.data || (existingPath && !existing.data)) {
    return (
      <div>
        {heading}
        <p className="muted">Loading…</p>
      </div>
    );
  }
  const canWrite = access.role === "admin" || access.role === "developer";
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
      existing={existing.data ?? null}
      me={{ username: me.data.username, role: access.role! }}
      canWrite={canWrite}
    />
  );
}

type LoadedScript = { path: string; summary: string; language: string; content: string; hash: string };

function LoadedEditor({
  workspace,
  existingPath,
  existing,
  me,
  canWrite,
}: {
  workspace: string;
  existingPath?: string;
  existing: LoadedScript | null;
  me: { username: string; role: Role };
  canWrite: boolean;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();

  const [path, setPath] = useState(existing?.path ?? `u/${me.username}/`);
  const [summary, setSummary] = useState(existing?.summary ?? "");
  const [language, setLanguage] = useState<string>(existing?.language ?? "bash");
  const [content, setContent] = useState(existing?.content ?? TEMPLATES.bash ?? "");
  const [deployedHash, setDeployedHash] = useState<string | null>(existing?.hash ?? null);
  const [dirty, setDirty] = useState(false);
  const [args, setArgs] = useState<Record<string, unknown>>({});
  // Bumped whenever content is replaced from outside the editor (reloaded script, template).
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
    setEditorGeneration((n) => n + 1);
    setDeployedHash(existing.hash);
  }, [existing, dirty]);

  useLeaveGuard(dirty);

  const debouncedContent = useDebounced(content, 300);
  const inferred = useQuery(trpc.script.inferSchema.queryOptions({ language, content: debouncedContent }));
  const schema = inferred.data?.schema ?? null;

  const deploy = useMutation(
    trpc.script.deploy.mutationOptions({
      onSuccess: async (script) => {
        setDeployedHash(script.hash);
        lastLoadedHash.current = script.hash;
        if (edits.current === deployedAtEdit.current) setDirty(false);
        await queryClient.invalidateQueries(trpc.script.pathFilter());
        if (!existingPath) router.replace(`/w/${workspace}/scripts/edit/${script.path}`);
      },
    }),
  );
  const run = useMutation(
    trpc.job.runScript.mutationOptions({ onSuccess: ({ id }) => router.push(`/w/${workspace}/runs/${id}`) }),
  );
  const deployField = errorField(deploy.error);
  const runField = errorField(run.error);
  const clientPathProblem = existingPath ? null : pathProblem(path, me);
  const pathError = clientPathProblem ?? (deployField === "path" ? errorMessage(deploy.error) : null);

  function changeLanguage(next: string) {
    if (!existingPath && content === TEMPLATES[language]) {
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

  function submit() {
    if (clientPathProblem) return;
    deployedAtEdit.current = edits.current;
    deploy.mutate({ workspace, path, summary, language, content, parentHash: deployedHash });
  }

  return (
    <div>
      <div className="toolbar">
        <h1>{existingPath ? existingPath : "New script"}</h1>
        <div className="row">
          {existingPath && <a href={`/w/${workspace}/scripts/webhooks/${existingPath}`}>Webhooks</a>}
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
              onClick={submit}
            >
              {deploy.isPending ? "Deploying…" : "Deploy"}
            </button>
          )}
        </div>
      </div>
      {!canWrite && (
        <div className="panel muted" data-testid="read-only-note" style={{ marginBottom: "1rem" }}>
          {readOnlyNote(me.role)}
        </div>
      )}
      <div className="panel row" style={{ marginBottom: "1rem" }}>
        <label style={{ flex: 2 }}>
          Path <span className="hint">u/&lt;user&gt;/&lt;name&gt; or f/&lt;folder&gt;/&lt;name&gt;</span>
          <input
            name="path"
            value={path}
            disabled={!!existingPath || !canWrite}
            aria-invalid={!!pathError}
            onChange={(e) => changePath(e.target.value)}
          />
          {pathError && (
            <span className="field-error" data-testid="path-error">
              {pathError}
            </span>
          )}
        </label>
        <label style={{ flex: 2 }}>
          Summary
          <input
            name="summary"
            value={summary}
            disabled={!canWrite}
            onChange={(e) => (setSummary(e.target.value), edited())}
          />
        </label>
        <label style={{ flex: 1 }}>
          Language
          <select
            name="language"
            value={language}
            disabled={!canWrite}
            onChange={(e) => changeLanguage(e.target.value)}
          >
            {LANGUAGES.map((l) => (
              <option key={l}>{l}</option>
            ))}
          </select>
        </label>
      </div>
      {deploy.error && deployField !== "path" && (
        <div className="error" role="alert" style={{ marginBottom: "1rem" }}>
          {errorMessage(deploy.error)}
        </div>
      )}
      <div className="editor-grid">
        <CodeEditor
          key={editorGeneration}
          language={language}
          initialValue={content}
          readOnly={!canWrite}
          onChange={(next) => (setContent(next), edited())}
        />
        <div className="panel stack">
          <h2 style={{ margin: 0 }}>Run</h2>
          {inferred.data?.error && <div className="field-error">{inferred.data.error}</div>}
          <ArgsForm
            schema={schema}
            values={args}
            onChange={setArgs}
            errorField={runField}
            errorText={errorMessage(run.error)}
          />
          <button
            type="button"
            className="primary"
            disabled={!deployedHash || run.isPending}
            title={deployedHash ? "Run the deployed version" : "Deploy first"}
            onClick={() => run.mutate({ workspace, path: existingPath ?? path, args })}
          >
            Run
          </button>
          {!deployedHash && <span className="muted">Deploy the script to run it.</span>}
          {run.error && !runField?.startsWith("args.") && (
            <div className="error">{errorMessage(run.error)}</div>
          )}
        </div>
      </div>
    </div>
  );
}
