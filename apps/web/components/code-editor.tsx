"use client";
import Editor, { loader } from "@monaco-editor/react";
import * as monaco from "monaco-editor";

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
}

const MONACO_LANGUAGE: Record<string, string> = {
  bash: "shell",
  python3: "python",
  bun: "typescript",
  deno: "typescript",
  postgresql: "sql",
};

/**
 * Uncontrolled on purpose: feeding every keystroke back through `value` makes Monaco drop
 * characters under fast typing. The parent remounts it (`key`) to load other content.
 */
export default function CodeEditor({
  language,
  initialValue,
  onChange,
  readOnly = false,
}: {
  language: string;
  initialValue: string;
  onChange: (value: string) => void;
  /** Shows the code without letting it be changed (members who may not write scripts). */
  readOnly?: boolean;
}) {
  return (
    <div className="editor-frame" data-testid="code-editor">
      <Editor
        height="460px"
        language={MONACO_LANGUAGE[language] ?? "plaintext"}
        defaultValue={initialValue}
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
