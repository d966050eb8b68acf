"use client";
import Editor, { loader, type OnMount } from "@monaco-editor/react";
import * as monaco from "monaco-editor";
import { useEffect, useRef, useState } from "react";
import { usePageTheme } from "@/lib/page-theme";

// Monaco is bundled from node_modules (nothing loads from a CDN) and its language services run
// in web workers built by Next from the same package.
if (typeof window !== "undefined") {
  (self as unknown as { MonacoEnvironment: monaco.Environment }).MonacoEnvironment = {
    getWorker(_workerId: string, label: string) {
      if (label === "typescript" || label === "javascript") {
        return new Worker(new URL("monaco-editor/language/typescript/ts.worker", import.meta.url), {
          type: "module",
        });
      }
      if (label === "json") {
        return new Worker(new URL("monaco-editor/language/json/json.worker", import.meta.url), {
          type: "module",
        });
      }
      return new Worker(new URL("monaco-editor/editor/editor.worker", import.meta.url), { type: "module" });
    },
  };
  loader.config({ monaco });
  // The page's Monaco, for tests that read its markers (page.evaluate).
  (window as unknown as { monaco: typeof monaco }).monaco = monaco;
}

const MONACO_LANGUAGE: Record<string, string> = {
  bash: "shell",
  python3: "python",
  bun: "typescript",
  deno: "typescript",
  postgresql: "sql",
};

const FILE_NAME: Record<string, string> = {
  bash: "main.sh",
  python3: "main.py",
  bun: "main.ts",
  deno: "main.ts",
  postgresql: "main.sql",
};

// What the runtimes provide besides the standard library: enough for Monaco not to flag them.
const RUNTIME_GLOBALS = `
declare const Bun: {
  readonly version: string;
  readonly revision: string;
  readonly env: Record<string, string | undefined>;
  readonly argv: string[];
  readonly main: string;
  sleep(ms: number): Promise<void>;
  file(path: string): any;
  write(destination: any, input: any): Promise<number>;
  [key: string]: any;
};
declare const Deno: {
  readonly version: { readonly deno: string; readonly v8: string; readonly typescript: string };
  readonly env: { get(key: string): string | undefined; set(key: string, value: string): void; toObject(): Record<string, string> };
  readonly args: string[];
  readTextFile(path: string): Promise<string>;
  writeTextFile(path: string, data: string): Promise<void>;
  [key: string]: any;
};
declare const process: { env: Record<string, string | undefined>; argv: string[]; exit(code?: number): never; [key: string]: any };
declare module "npm:windmill-client" { export * from "windmill-client"; }
declare module "npm:windmill-client@1" { export * from "windmill-client"; }
`;

let typesConfigured = false;

/** TypeScript for bun and deno scripts: the runtimes' globals and windmill-client's types (served by the app). */
function configureTypeScript(): void {
  if (typesConfigured) return;
  typesConfigured = true;
  const ts = monaco.typescript;
  ts.typescriptDefaults.setCompilerOptions({
    target: ts.ScriptTarget.ESNext,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.NodeJs,
    allowNonTsExtensions: true,
    allowSyntheticDefaultImports: true,
    esModuleInterop: true,
    noEmit: true,
    skipLibCheck: true,
    lib: ["esnext", "dom"],
  });
  ts.typescriptDefaults.addExtraLib(RUNTIME_GLOBALS, "file:///runtime-globals.d.ts");
  void fetch("/editor-types/windmill-client")
    .then((response) => (response.ok ? response.json() : null))
    .then((body: { files: Record<string, string> } | null) => {
      if (!body) return;
      for (const [file, content] of Object.entries(body.files)) {
        ts.typescriptDefaults.addExtraLib(content, `file:///node_modules/windmill-client/${file}`);
      }
      ts.typescriptDefaults.addExtraLib(
        'export * from "./dist/index";\nexport { default } from "./dist/index";\n',
        "file:///node_modules/windmill-client/index.d.ts",
      );
    })
    .catch(() => {
      // Offline or the route failed: the editor still works, without the client's types.
      typesConfigured = false;
    });
}

/**
 * Uncontrolled on purpose: feeding every keystroke back through `value` makes Monaco drop
 * characters under fast typing. The parent remounts it (`key`) to load other content.
 */
export default function CodeEditor({
  language,
  initialValue,
  onChange,
  onRun,
  readOnly = false,
  height = 460,
}: {
  language: string;
  initialValue: string;
  onChange: (value: string) => void;
  /** Ctrl/⌘-Enter in the editor. */
  onRun?: () => void;
  /** Shows the code without letting it be changed (members who may not write scripts). */
  readOnly?: boolean;
  height?: number | string;
}) {
  const onRunRef = useRef(onRun);
  useEffect(() => {
    onRunRef.current = onRun;
  });
  // `data-editor-ready` on the frame: set once the editor listens to its model. The library
  // creates the model (visible in `monaco.editor.getModels()`) one React commit before it
  // subscribes `onChange`, so a change made in between would never reach the page's state. The
  // mount callback and that subscription run in the same commit, so a re-render from the mount
  // callback comes after both. The expression and YAML editors do the same.
  const [ready, setReady] = useState(false);
  const onMount: OnMount = (editor) => {
    editor.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.Enter, () => onRunRef.current?.());
    setReady(true);
  };
  const theme = usePageTheme();
  return (
    <div className="editor-frame" data-testid="code-editor" data-editor-ready={ready || undefined}>
      <Editor
        height={height}
        theme={theme === "dark" ? "vs-dark" : "light"}
        language={MONACO_LANGUAGE[language] ?? "plaintext"}
        path={`file:///${FILE_NAME[language] ?? "main.txt"}`}
        defaultValue={initialValue}
        beforeMount={() => configureTypeScript()}
        onMount={onMount}
        onChange={(next) => onChange(next ?? "")}
        options={{
          minimap: { enabled: false },
          fontSize: 13,
          scrollBeyondLastLine: false,
          automaticLayout: true,
          readOnly,
          domReadOnly: readOnly,
        }}
      />
    </div>
  );
}
