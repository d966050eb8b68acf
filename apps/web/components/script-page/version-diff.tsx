"use client";
import { DiffEditor, loader } from "@monaco-editor/react";
import * as monaco from "monaco-editor";
import { useEffect, useState } from "react";

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

/** Monaco's theme following the page's (data-theme on <html>, switched by the sidebar toggle). */
function useMonacoTheme(): string {
  const [dark, setDark] = useState(false);
  useEffect(() => {
    const root = document.documentElement;
    const read = () => setDark(root.dataset.theme === "dark");
    read();
    const observer = new MutationObserver(read);
    observer.observe(root, { attributes: true, attributeFilter: ["data-theme"] });
    return () => observer.disconnect();
  }, []);
  return dark ? "vs-dark" : "light";
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
  return (
    <div className="editor-frame" data-testid="version-diff">
      <DiffEditor
        height={420}
        language={MONACO_LANGUAGE[language] ?? "plaintext"}
        original={original}
        modified={modified}
        theme={theme}
        options={{
          readOnly: true,
          originalEditable: false,
          renderSideBySide: true,
          // Side by side even in a narrow column: the point is to see both versions.
          useInlineViewWhenSpaceIsLimited: false,
          minimap: { enabled: false },
          fontSize: 13,
          scrollBeyondLastLine: false,
          automaticLayout: true,
        }}
      />
    </div>
  );
}
