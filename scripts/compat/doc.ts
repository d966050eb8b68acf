// docs/compatibility.md: one row per endpoint Windmill's clients call, with its state. Written by
// `npm run compat` from a live probe, read back by the test that keeps it true.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { ClientEndpoint } from "./endpoints.ts";

export const DOC_PATH = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../docs/compatibility.md",
);

/** The flows section (every OpenFlow field), maintained by hand and copied in by renderDoc. */
export const FLOWS_SECTION_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "flows.md");

export type State = "works" | "pending" | "out of scope";

export interface Row {
  method: string;
  path: string;
  operationId: string;
  state: State;
  note: string;
}

/** `wmill: script, sync · windmill-client: runScriptByPath, waitJob` (the first few of each). */
function callers(endpoint: ClientEndpoint): string {
  const cli = endpoint.callers
    .filter((c) => c.startsWith("wmill "))
    .map((c) => c.slice(6))
    .sort();
  const client = endpoint.callers
    .filter((c) => c.startsWith("windmill-client "))
    .map((c) => c.slice(16))
    .sort();
  const list = (names: string[]) =>
    names.length > 4 ? `${names.slice(0, 4).join(", ")}, …` : names.join(", ");
  return [cli.length ? `wmill ${list(cli)}` : "", client.length ? `windmill-client ${list(client)}` : ""]
    .filter(Boolean)
    .join("; ");
}

/** What a "works" does not say by itself: where Millrace answers as Windmill but differs behind it. */
const CAVEATS: Record<string, string> = {
  getSettings: "the integrations Millrace lacks (Slack, webhook, handlers, AI…) read as unset",
  editWebhook: "accepted when it leaves the setting unset (Millrace has none), else 400 naming it",
  editErrorHandler: "accepted when it leaves the setting unset (Millrace has none), else 400 naming it",
  editSuccessHandler: "accepted when it leaves the setting unset (Millrace has none), else 400 naming it",
  editAutoInvite: "accepted when it leaves the setting unset (Millrace has none), else 400 naming it",
  editCopilotConfig: "accepted when it leaves the setting unset (Millrace has none), else 400 naming it",
  editInstanceGroups: "accepted when it leaves the setting unset (Millrace has none), else 400 naming it",
  editLargeFileStorageConfig:
    "S3Storage (S3 and S3-compatible) only: other types and advanced_permissions are refused naming the field",
  s3ResourceInfo:
    "the credentials go to whoever may use the storage: every member for a public one, as in Windmill",
  fileUpload: "streamed to the store; at most OBJECT_STORAGE_UPLOAD_LIMIT_MB (default 1024)",
  fileDownload: "served as an attachment (never rendered as a page of Millrace's origin)",
  editSlackCommand: "accepted when it leaves the setting unset (Millrace has none), else 400 naming it",
  editDefaultScripts: "accepted when it leaves the setting unset (Millrace has none), else 400 naming it",
  workspaceMuteCriticalAlertsUi:
    "accepted when it leaves the setting unset (Millrace has none), else 400 naming it",
  connectSlack: "Millrace has no Slack integration: only leaving it unset is accepted, else 400 naming it",
  setWorkspaceSlackOauthConfig:
    "Millrace has no Slack integration: only leaving it unset is accepted, else 400 naming it",
  deleteWorkspaceSlackOauthConfig: "Millrace has no Slack integration: nothing to delete",
  disconnectSlack: "Millrace has no Slack integration: nothing to disconnect",
  addGranularAcls: "Millrace grants per folder and group: kinds folder and group_, others 400 naming kind",
  removeGranularAcls: "Millrace grants per folder and group: kinds folder and group_, others 400 naming kind",
};

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s+/g, " ").trim();

export function renderDoc(
  endpoints: ClientEndpoint[],
  results: Map<string, { ok: boolean; problem: string }>,
): { text: string; rows: Row[] } {
  const rows: Row[] = endpoints.map((endpoint) => {
    const key = `${endpoint.method} ${endpoint.path}`;
    const result = results.get(key);
    const state: State = endpoint.outOfScope ? "out of scope" : result?.ok ? "works" : "pending";
    const why = endpoint.outOfScope
      ? endpoint.outOfScope
      : state === "pending"
        ? (result?.problem ?? "not probed")
        : (CAVEATS[endpoint.operationId] ?? "");
    return {
      method: endpoint.method,
      path: endpoint.path,
      operationId: endpoint.operationId,
      state,
      note: [why, callers(endpoint)].filter(Boolean).join(" — "),
    };
  });
  const inScope = rows.filter((r) => r.state !== "out of scope");
  const works = inScope.filter((r) => r.state === "works").length;
  const percent = inScope.length ? ((100 * works) / inScope.length).toFixed(1) : "0";
  const lines = [
    "# Compatibility with Windmill's clients",
    "",
    "Every REST endpoint that Windmill's own clients call, and whether Millrace serves it: the",
    "functions of `windmill-client` 1.818 (scripts' `import * as wmill`) and the `wmill` CLI 1.819's",
    "workspace, script, flow, variable, resource, resource-type, schedule, folder, group, user, token,",
    "job (`wmill job` and `wmill jobs`), sync, generate-metadata, queues and workers commands. The",
    "list is read from the installed clients, not written by hand: `scripts/compat/endpoints.ts`",
    "follows each client's call graph from its exported functions and command objects to its",
    "generated services (and the few URLs it builds by hand), and the answers are checked against",
    "windmill-client's generated types.",
    "",
    "- **works**: called well-formed against a live Millrace (seeded with a workspace, a script, a",
    "  job, a flow, a variable, a resource, a schedule, a folder and a group), it answers 2xx and the",
    "  answer has every field windmill-client's generated types require, of the type they say.",
    "- **pending**: not yet; the note says what came back.",
    "- **out of scope**: apps, triggers and datatables (issue 23).",
    "",
    "Generated by `npm run compat`; `apps/cli/src/windmill-compat.int.test.ts` probes every endpoint",
    "again and fails when a row says works and the endpoint fails, or says pending and it works.",
    "What Millrace does with each field of a flow (OpenFlow) is in the flows section at the end.",
    "",
    `**${works} of ${inScope.length} in-scope endpoints work (${percent} %)**; ${inScope.length - works} pending,`,
    `${rows.length - inScope.length} out of scope.`,
    "",
    ...pendingByArea(inScope),

    "| Method | Path | operationId | State | Note |",
    "| --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) => `| ${r.method} | \`/api${r.path}\` | ${r.operationId} | ${r.state} | ${cell(r.note)} |`,
    ),
    "",
    fs.readFileSync(FLOWS_SECTION_PATH, "utf8").trimEnd(),
    "",
  ];
  return { text: lines.join("\n"), rows };
}

/** `- jobs: restartFlowAtStep, …` for each area (the path's noun) with pending endpoints. */
function pendingByArea(rows: Row[]): string[] {
  const areas = new Map<string, string[]>();
  for (const row of rows.filter((r) => r.state === "pending")) {
    const area = row.path.replace(/^\/w\/\{workspace\}/, "").split("/")[1] ?? "";
    areas.set(area, [...(areas.get(area) ?? []), row.operationId]);
  }
  if (areas.size === 0) return [];
  return [
    "Pending, by area:",
    "",
    ...[...areas].sort(([a], [b]) => a.localeCompare(b)).map(([area, ops]) => `- ${area}: ${ops.join(", ")}`),
    "",
  ];
}

export function parseDoc(text: string): Row[] {
  const rows: Row[] = [];
  // Prettier pads the columns: spaces around each cell are not part of it.
  const re = /^\|\s*(\w+)\s*\|\s*`\/api([^`]+)`\s*\|\s*(\w+)\s*\|\s*(works|pending|out of scope)\s*\|(.*)\|$/;
  for (const line of text.split("\n")) {
    const m = re.exec(line);
    if (m)
      rows.push({ method: m[1]!, path: m[2]!, operationId: m[3]!, state: m[4] as State, note: m[5]!.trim() });
  }
  return rows;
}
