import type { RestoreChanges } from "@millrace/core";

const STATUS = { added: "added", changed: "changed", deleted: "deleted: removed from the workspace" };

function lineColor(line: string): string | undefined {
  if (line.startsWith("@@")) return "var(--muted)";
  if (line.startsWith("+")) return "var(--ok)";
  if (line.startsWith("-")) return "var(--bad)";
  return undefined;
}

/** Each file of a restore's diff with its lines, as the server computed and capped them. */
export function RestoreChangesView({ changes }: { changes: RestoreChanges }) {
  return (
    <div className="stack" data-testid="restore-changes">
      {changes.files.map((change) => (
        <details
          key={change.file}
          data-testid="restore-file"
          data-status={change.status}
          open={change.status === "changed"}
        >
          <summary>
            <code>{change.file}</code> <span className="muted">({STATUS[change.status]})</span>
          </summary>
          {change.lines.length > 0 && (
            <pre className="diff-lines" style={{ margin: "0.25rem 0", overflowX: "auto", fontSize: 12 }}>
              {change.lines.map((line, i) => (
                <div key={i} style={{ color: lineColor(line) }}>
                  {line || " "}
                </div>
              ))}
            </pre>
          )}
          {change.truncated && (
            <div className="muted" data-testid="restore-file-truncated">
              More lines not shown: the diff is cut to keep the page small.
            </div>
          )}
        </details>
      ))}
      {changes.truncated && (
        <div className="muted" data-testid="restore-changes-truncated">
          The diff reached its size limit: later files are listed without their lines.
        </div>
      )}
    </div>
  );
}
