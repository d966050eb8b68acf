"use client";
// A small Monaco editor for a flow expression (JavaScript) with completion of `flow_input.<arg>`,
// `results.<step>.<key>` and `previous_result`. One completion provider serves every expression
// editor on the page; each editor's model path says which context (args, steps, results) it has.
import Editor from "@monaco-editor/react";
import * as monaco from "monaco-editor";
// Loads Monaco from node_modules and sets up its workers (side effects of the module).
import "@/components/code-editor";
import { useEffect, useId, useState } from "react";
import { usePageTheme } from "@/lib/page-theme";

export interface ExpressionContext {
  /** The flow's input names (`flow_input.<name>`). */
  inputs: string[];
  /** The steps whose results the expression may read, with their last test result if any. */
  steps: { id: string; result?: unknown }[];
  /** Inside a loop: `flow_input.iter.value` and `.index`. */
  inLoop: boolean;
}

const contexts = new Map<string, ExpressionContext>();
let registered = false;

function keysOf(value: unknown): string[] {
  return value && typeof value === "object" && !Array.isArray(value) ? Object.keys(value) : [];
}

function lookup(value: unknown, path: string[]): unknown {
  let node = value;
  for (const key of path) node = (node as Record<string, unknown> | null)?.[key];
  return node;
}

function register(): void {
  if (registered) return;
  registered = true;
  monaco.languages.registerCompletionItemProvider("javascript", {
    triggerCharacters: ["."],
    provideCompletionItems(model, position) {
      const context = contexts.get(model.uri.toString());
      if (!context) return { suggestions: [] };
      const before = model.getValueInRange({
        startLineNumber: position.lineNumber,
        startColumn: 1,
        endLineNumber: position.lineNumber,
        endColumn: position.column,
      });
      const word = model.getWordUntilPosition(position);
      const range = {
        startLineNumber: position.lineNumber,
        endLineNumber: position.lineNumber,
        startColumn: word.startColumn,
        endColumn: word.endColumn,
      };
      const item = (label: string, detail: string, kind = monaco.languages.CompletionItemKind.Field) => ({
        label,
        kind,
        detail,
        insertText: label,
        range,
      });
      const chain = /((?:flow_input|results|previous_result)(?:\.[A-Za-z0-9_$-]+)*)\.[A-Za-z0-9_$]*$/.exec(
        before,
      );
      if (chain) {
        const [root, ...rest] = chain[1]!.split(".");
        if (root === "flow_input") {
          if (rest.length === 0) {
            return {
              suggestions: [
                ...context.inputs.map((name) => item(name, "flow input")),
                ...(context.inLoop ? [item("iter", "the loop's iteration: value and index")] : []),
              ],
            };
          }
          if (rest.length === 1 && rest[0] === "iter" && context.inLoop) {
            return {
              suggestions: [item("value", "this iteration's item"), item("index", "this iteration's index")],
            };
          }
          return { suggestions: [] };
        }
        if (root === "results") {
          if (rest.length === 0) {
            return { suggestions: context.steps.map((step) => item(step.id, `result of step ${step.id}`)) };
          }
          const step = context.steps.find((each) => each.id === rest[0]);
          const keys = keysOf(lookup(step?.result, rest.slice(1)));
          return { suggestions: keys.map((key) => item(key, "from the last test run")) };
        }
        return { suggestions: [] };
      }
      const Variable = monaco.languages.CompletionItemKind.Variable;
      return {
        suggestions: [
          item("flow_input", "the flow's input", Variable),
          item("results", "the results of earlier steps", Variable),
          item("previous_result", "the result of the step before", Variable),
        ],
      };
    },
  });
}

export default function ExpressionEditor({
  value,
  onChange,
  context,
  label,
  height = 64,
  readOnly = false,
}: {
  value: string;
  onChange: (value: string) => void;
  context: ExpressionContext;
  /** The accessible name of the editor's text area. */
  label: string;
  height?: number;
  readOnly?: boolean;
}) {
  const theme = usePageTheme();
  const id = useId().replace(/[^A-Za-z0-9]/g, "");
  const path = `file:///expressions/${id}.js`;
  const [ready, setReady] = useState(false);
  useEffect(() => {
    contexts.set(monaco.Uri.parse(path).toString(), context);
  }, [path, context]);
  useEffect(() => () => void contexts.delete(monaco.Uri.parse(path).toString()), [path]);
  return (
    <div className="editor-frame" data-testid="expression-editor" data-editor-ready={ready || undefined}>
      <Editor
        height={height}
        theme={theme === "dark" ? "vs-dark" : "light"}
        language="javascript"
        path={path}
        defaultValue={value}
        beforeMount={register}
        onMount={() => setReady(true)}
        onChange={(next) => onChange(next ?? "")}
        options={{
          minimap: { enabled: false },
          fontSize: 13,
          lineNumbers: "off",
          glyphMargin: false,
          folding: false,
          scrollBeyondLastLine: false,
          automaticLayout: true,
          wordWrap: "on",
          renderLineHighlight: "none",
          overviewRulerLanes: 0,
          scrollbar: { vertical: "auto", horizontal: "hidden" },
          ariaLabel: label,
          readOnly,
          domReadOnly: readOnly,
          // The editor is a few lines tall inside a frame that hides overflow: the suggest widget
          // would be cut to a row or two unless it is positioned outside the frame.
          fixedOverflowWidgets: true,
          quickSuggestions: true,
          suggestOnTriggerCharacters: true,
        }}
      />
    </div>
  );
}
