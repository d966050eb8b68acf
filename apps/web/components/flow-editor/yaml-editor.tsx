"use client";
import Editor from "@monaco-editor/react";
// Loads Monaco from node_modules and sets up its workers (side effects of the module).
import "@/components/code-editor";
import { useState } from "react";
import { usePageTheme } from "@/lib/page-theme";

/** The YAML view's editor: uncontrolled (the parent remounts it with `key` to load other text). */
export default function YamlEditor({
  initialValue,
  onChange,
  readOnly,
  height = 560,
}: {
  initialValue: string;
  onChange: (value: string) => void;
  readOnly?: boolean;
  height?: number;
}) {
  const theme = usePageTheme();
  const [ready, setReady] = useState(false);
  return (
    <div className="editor-frame" data-testid="yaml-editor" data-editor-ready={ready || undefined}>
      <Editor
        height={height}
        theme={theme === "dark" ? "vs-dark" : "light"}
        language="yaml"
        path="file:///flow.yaml"
        defaultValue={initialValue}
        onMount={() => setReady(true)}
        onChange={(next) => onChange(next ?? "")}
        options={{
          minimap: { enabled: false },
          fontSize: 13,
          scrollBeyondLastLine: false,
          automaticLayout: true,
          tabSize: 2,
          ariaLabel: "The flow as YAML",
          readOnly,
          domReadOnly: readOnly,
        }}
      />
    </div>
  );
}
