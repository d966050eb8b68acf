"use client";
import { DiffEditor, loader } from "@monaco-editor/react";
import * as monaco from "monaco-editor";
import { useEffect, useRef } from "react";
import { usePageTheme } from "@/lib/page-theme";

// Monaco from node_modules, as in code-editor.tsx: nothing loads from a CDN.
if (typeof window !== "undefined") {
  const scope = self as unknown as { MonacoEnvironment?: monaco.Environment };
  scope.MonacoEnvironment ??= {
    getWorker(_workerId: string, label: string) {
      if (label === "typescript" || label === "javascript") {
        return new Worker(new URL("monaco-editor/language/typescript/ts.worker", import.meta.url), {
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

/** Monaco's theme following the page's. */
function useMonacoTheme(): string {
  return usePageTheme() === "dark" ? "vs-dark" : "light";
}

/** Two versions of a script side by side, read-only, older on the left. */
export default function VersionDiff({
  language,
  original,
  modified,
}: {
  language: string;
  original: string;
  modified: string;
}) {
  const theme = useMonacoTheme();
  const editorRef = useRef<monaco.editor.IStandaloneDiffEditor | null>(null);
  // @monaco-editor/react disposes the text models before the widget on unmount, which Monaco
  // reports as an uncaught "TextModel got disposed before DiffEditorWidget model got reset" (on
  // every navigation away, e.g. Run). The models are kept from it and released here, after the
  // widget has let go of them; this cleanup runs before the child DiffEditor's own.
  useEffect(
    () => () => {
      const editor = editorRef.current;
      const models = editor?.getModel();
      editor?.setModel(null);
      models?.original.dispose();
      models?.modified.dispose();
    },
    [],
  );
  return (
    <div className="editor-frame" data-testid="version-diff">
      <DiffEditor
        height={420}
        language={MONACO_LANGUAGE[language] ?? "plaintext"}
        original={original}
        modified={modified}
        theme={theme}
        keepCurrentOriginalModel
        keepCurrentModifiedModel
        onMount={(editor) => {
          editorRef.current = editor;
        }}
        options={{
          readOnly: true,
          originalEditable: false,
          renderSideBySide: true,
          // Side by side even in a narrow column: the point is to see both versions.
          useInlineViewWhenSpaceIsLimited: false,
          // Indentation is syntax in Python and YAML (a fixed IndentationError is a whitespace-only
          // change), and a changed bash heredoc or SQL literal differs too: every change shows.
          ignoreTrimWhitespace: false,
          minimap: { enabled: false },
          fontSize: 13,
          scrollBeyondLastLine: false,
          automaticLayout: true,
        }}
      />
    </div>
  );
}
