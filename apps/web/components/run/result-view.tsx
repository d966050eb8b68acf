"use client";
import { Braces, Copy } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { JsonTree } from "./json-tree";

/** Rows of a table result shown before "Show all". */
export const TABLE_PREVIEW_ROWS = 20;

type Row = Record<string, unknown>;

export interface JobErrorShape {
  name?: string;
  message?: string;
  stack?: string;
}

function isPlainObject(value: unknown): value is Row {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Windmill's error result: `{"error": {"name", "message", "stack"}}`. */
export function errorOf(result: unknown): JobErrorShape | null {
  if (!isPlainObject(result) || !isPlainObject(result.error)) return null;
  const error = result.error;
  if (typeof error.message !== "string" && typeof error.name !== "string") return null;
  return {
    name: typeof error.name === "string" ? error.name : undefined,
    message: typeof error.message === "string" ? error.message : undefined,
    stack: typeof error.stack === "string" ? error.stack : undefined,
  };
}

const IMAGE_TYPES: Record<string, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  jpg: "image/jpeg",
  gif: "image/gif",
  svg: "image/svg+xml",
};

/** Windmill's rich image results: `{"png": "<base64>"}` (also jpeg, gif; svg as text or base64). */
export function imageOf(result: unknown): { src: string; kind: string } | null {
  if (!isPlainObject(result)) return null;
  const keys = Object.keys(result);
  if (keys.length !== 1) return null;
  const kind = keys[0] as string;
  const mime = IMAGE_TYPES[kind];
  const data = result[kind];
  if (!mime || typeof data !== "string" || data === "") return null;
  if (kind === "svg" && data.trimStart().startsWith("<")) {
    return { src: `data:${mime};charset=utf-8,${encodeURIComponent(data)}`, kind };
  }
  return { src: `data:${mime};base64,${data.replace(/\s/g, "")}`, kind };
}

/** A list of objects: what a table shows. */
export function tableOf(result: unknown): Row[] | null {
  if (!Array.isArray(result) || result.length === 0) return null;
  return result.every(isPlainObject) ? (result as Row[]) : null;
}

/** A stack as lines: real newlines, also when it arrived with `\n` escaped. */
export function readableStack(stack: string): string {
  return stack.includes("\n") ? stack : stack.replaceAll("\\n", "\n").replaceAll("\\t", "\t");
}

function cellText(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

function ResultTable({ rows }: { rows: Row[] }) {
  const [all, setAll] = useState(false);
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows.slice(0, 200)) {
    for (const key of Object.keys(row)) {
      if (!seen.has(key)) {
        seen.add(key);
        columns.push(key);
      }
    }
  }
  const shown = all ? rows : rows.slice(0, TABLE_PREVIEW_ROWS);
  return (
    <div className="stack">
      <div
        className="max-h-[480px] overflow-auto rounded-md border border-line"
        tabIndex={0}
        role="region"
        aria-label="Result table"
      >
        <table data-testid="result-table" className="m-0 w-full">
          <thead>
            <tr>
              {columns.map((column) => (
                <th key={column} scope="col" className="sticky top-0 bg-panel">
                  {column}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((row, index) => (
              <tr key={index}>
                {columns.map((column) => (
                  <td key={column} className="align-top font-mono text-[12.5px] break-words">
                    {cellText(row[column])}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="row">
        <span className="muted" data-testid="result-table-count">
          {shown.length === rows.length
            ? `${rows.length} row${rows.length === 1 ? "" : "s"}`
            : `First ${shown.length} of ${rows.length} rows`}
        </span>
        {rows.length > TABLE_PREVIEW_ROWS && (
          <Button size="sm" onClick={() => setAll(!all)}>
            {all ? `Show the first ${TABLE_PREVIEW_ROWS}` : `Show all ${rows.length} rows`}
          </Button>
        )}
      </div>
    </div>
  );
}

export function ErrorView({ error }: { error: JobErrorShape }) {
  return (
    <div className="stack" data-testid="job-error">
      <p className="m-0 rounded-md border border-bad-line bg-bad-bg p-3 text-fg">
        <strong className="text-bad" data-testid="job-error-name">
          {error.name ?? "Error"}
        </strong>
        {error.message !== undefined && (
          <>
            : <span data-testid="job-error-message">{error.message}</span>
          </>
        )}
      </p>
      {error.stack && (
        <pre
          data-testid="job-error-stack"
          className="whitespace-pre-wrap"
          aria-label="Stack trace"
          tabIndex={0}
        >
          {readableStack(error.stack)}
        </pre>
      )}
    </div>
  );
}

/**
 * A job's result rendered by its shape: an error (name, message, stack), an image, a table for a
 * list of objects, a collapsible JSON tree otherwise (scalars as their JSON text). "Raw JSON"
 * shows the value as JSON text and "Copy" copies it.
 */
export function ResultView({ result, failed = false }: { result: unknown; failed?: boolean }) {
  const [raw, setRaw] = useState(false);
  const json = JSON.stringify(result, null, 2) ?? "null";
  const error = failed ? errorOf(result) : null;
  const image = error ? null : imageOf(result);
  const rows = error || image ? null : tableOf(result);
  const scalar = result === null || typeof result !== "object";

  let body;
  if (raw)
    body = (
      <pre data-testid="job-result" tabIndex={0} aria-label="Result as JSON">
        {json}
      </pre>
    );
  else if (error)
    body = (
      <div data-testid="job-result">
        <ErrorView error={error} />
      </div>
    );
  else if (image)
    body = (
      <div data-testid="job-result">
        <img
          src={image.src}
          alt={`Image result (${image.kind})`}
          data-testid="result-image"
          className="max-h-[480px] max-w-full rounded-md border border-line bg-panel"
        />
      </div>
    );
  else if (rows)
    body = (
      <div data-testid="job-result">
        <ResultTable rows={rows} />
      </div>
    );
  else if (scalar)
    body = (
      <pre data-testid="job-result" className="max-h-none" tabIndex={0}>
        {json}
      </pre>
    );
  else
    body = (
      <div data-testid="job-result" className="overflow-x-auto rounded-md border border-line bg-panel p-3">
        <JsonTree value={result} />
      </div>
    );

  return (
    <div className="stack">
      {!scalar && (
        <div className="row">
          <Button size="sm" aria-pressed={raw} onClick={() => setRaw(!raw)}>
            <Braces aria-hidden /> Raw JSON
          </Button>
          <Button
            size="sm"
            onClick={() => {
              navigator.clipboard
                .writeText(json)
                .then(() => toast.success("Result copied"))
                .catch(() => toast.error("The browser refused access to the clipboard."));
            }}
          >
            <Copy aria-hidden /> Copy
          </Button>
        </div>
      )}
      {body}
    </div>
  );
}
