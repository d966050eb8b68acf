"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
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

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return debounced;
}

export function ScriptEditor({ workspace, path: existingPath }: { workspace: string; path?: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const existing = useQuery({
    ...trpc.script.get.queryOptions({ workspace, path: existingPath ?? "" }),
    enabled: !!existingPath,
  });
  const me = useQuery(trpc.me.queryOptions());

  const [path, setPath] = useState(existingPath ?? "");
  const [summary, setSummary] = useState("");
  const [language, setLanguage] = useState<string>("bash");
  const [content, setContent] = useState(TEMPLATES.bash ?? "");
  const [deployedHash, setDeployedHash] = useState<string | null>(null);
  const [dirty, setDirty] = useState(false);
  const [args, setArgs] = useState<Record<string, unknown>>({});
  // Bumped whenever content is replaced from outside the editor (loaded script, template).
  const [editorGeneration, setEditorGeneration] = useState(0);

  useEffect(() => {
    if (!existingPath && me.data && !path) setPath(`u/${me.data.username}/`);
  }, [existingPath, me.data, path]);

  useEffect(() => {
    const script = existing.data;
    if (!script) return;
    setPath(script.path);
    setSummary(script.summary);
    setLanguage(script.language);
    setContent(script.content);
    setEditorGeneration((n) => n + 1);
    setDeployedHash(script.hash);
    setDirty(false);
  }, [existing.data]);

  const debouncedContent = useDebounced(content, 300);
  const inferred = useQuery(trpc.script.inferSchema.queryOptions({ language, content: debouncedContent }));
  const schema = inferred.data?.schema ?? null;

  const deploy = useMutation(
    trpc.script.deploy.mutationOptions({
      onSuccess: async (script) => {
        setDeployedHash(script.hash);
        setDirty(false);
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

  function changeLanguage(next: string) {
    if (!existingPath && content === TEMPLATES[language]) {
      setContent(TEMPLATES[next] ?? "");
      setEditorGeneration((n) => n + 1);
    }
    setLanguage(next);
    setDirty(true);
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
          <button
            className="primary"
            type="button"
            disabled={deploy.isPending}
            onClick={() =>
              deploy.mutate({ workspace, path, summary, language, content, parentHash: deployedHash })
            }
          >
            {deploy.isPending ? "Deploying…" : "Deploy"}
          </button>
        </div>
      </div>
      <div className="panel row" style={{ marginBottom: "1rem" }}>
        <label style={{ flex: 2 }}>
          Path <span className="hint">u/&lt;user&gt;/&lt;name&gt; or f/&lt;folder&gt;/&lt;name&gt;</span>
          <input
            name="path"
            value={path}
            disabled={!!existingPath}
            aria-invalid={deployField === "path"}
            onChange={(e) => setPath(e.target.value)}
          />
          {deployField === "path" && <span className="field-error">{errorMessage(deploy.error)}</span>}
        </label>
        <label style={{ flex: 2 }}>
          Summary
          <input
            name="summary"
            value={summary}
            onChange={(e) => (setSummary(e.target.value), setDirty(true))}
          />
        </label>
        <label style={{ flex: 1 }}>
          Language
          <select name="language" value={language} onChange={(e) => changeLanguage(e.target.value)}>
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
          onChange={(next) => (setContent(next), setDirty(true))}
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
