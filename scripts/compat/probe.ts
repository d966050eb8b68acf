// Calls every in-scope endpoint of Windmill's clients against a live Millrace, well-formed (one
// fixture per endpoint: path parameters, query, body), and says for each whether it works: a 2xx
// answer whose body has the fields windmill-client's generated types require.
import { checkShape, type Shape } from "./shapes.ts";

/** What the seeded world holds (made by the before() of apps/cli/src/windmill-compat.int.test.ts). */
export interface World {
  ws: string;
  admin: string;
  adminEmail: string;
  /** A second member (groups, user updates) and an instance user who is not yet a member. */
  bob: string;
  carolEmail: string;
  scriptHash: string;
  /** A completed job of f/demo/hello, and one of the flow f/demo/flow. */
  job: string;
  flowJob: string;
  flowVersion: number;
  /** Filled in as the seed and the probes run: a queued job, a made token. */
  later: Record<string, string>;
}

export interface Call {
  path?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  /** Made from inside a job, with its own token (WM_TOKEN), as windmill-client in a job makes it. */
  fromJob?: boolean;
  /** A body sent as is (text/plain unless `contentType` says otherwise). */
  rawBody?: string;
  contentType?: string;
}

export interface ProbeResult {
  ok: boolean;
  status: number;
  /** Why it does not work: the status and body, or the fields that depart from the types. */
  problem: string;
}

const PY = 'def main(name: str = "world"):\n    return f"hello {name}"\n';
const PY_MADE = "def main(x: int = 1):\n    return x + 1\n";
const flowValue = (name: string) => ({
  modules: [
    {
      id: "a",
      value: {
        type: "script",
        path: "f/demo/hello",
        input_transforms: { name: { type: "static", value: name } },
      },
    },
  ],
});
const flowSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {},
  required: [],
};

/**
 * One fixture per operationId, in the order they run: reads first, then writes, then deletes of
 * what the writes made (never of the seeded world, which later probes read).
 */
export const FIXTURES: [string, (w: World) => Call][] = [
  // Instance and the caller.
  ["globalWhoami", () => ({})],
  ["whoami", () => ({})],
  ["listWorkspaces", () => ({})],
  ["listUserWorkspaces", () => ({})],
  ["listWorkspacesAsSuperAdmin", () => ({ query: { page: "1", per_page: "100" } })],
  ["existsWorkspace", (w) => ({ body: { id: w.ws } })],
  ["getWorkspaceName", () => ({})],
  ["getSettings", () => ({})],
  ["getGlobal", () => ({ path: { key: "base_url" } })],
  ["listWorkers", () => ({})],
  ["listWorkerGroups", () => ({})],
  // `wmill queues`.
  ["countJobsByTag", () => ({ query: { horizon_secs: "300" } })],
  ["getDbClock", () => ({})],
  ["listUsersAsSuperAdmin", () => ({ query: { page: "1", per_page: "100" } })],
  ["listWsSpecific", () => ({})],
  ["login", (w) => ({ body: { email: w.adminEmail, password: "compat-password-1" } })],
  // Users of the workspace.
  ["listUsers", () => ({})],
  ["getUser", (w) => ({ path: { username: w.bob } })],
  ["usernameToEmail", (w) => ({ path: { username: w.bob } })],
  // Scripts.
  ["listScripts", () => ({})],
  ["getScriptByPath", () => ({ path: { path: "f/demo/hello" } })],
  ["getScriptByHash", (w) => ({ path: { hash: w.scriptHash } })],
  ["existsScriptByPath", () => ({ path: { path: "f/demo/hello" } })],
  ["getScriptHistoryByPath", () => ({ path: { path: "f/demo/hello" } })],
  ["storeRawScriptTemp", () => ({ rawBody: JSON.stringify(PY), contentType: "application/json" })],
  ["diffRawScriptsWithDeployed", () => ({ body: { scripts: { "f/demo/hello": "0".repeat(64) } } })],
  // Flows.
  ["listFlows", () => ({})],
  ["getFlowByPath", () => ({ path: { path: "f/demo/flow" } })],
  ["existsFlowByPath", () => ({ path: { path: "f/demo/flow" } })],
  ["getFlowHistory", () => ({ path: { path: "f/demo/flow" } })],
  ["getFlowVersion", (w) => ({ path: { version: String(w.flowVersion) } })],
  // Variables, resources, resource types.
  ["listVariable", () => ({})],
  ["getVariable", () => ({ path: { path: "f/demo/secret" } })],
  ["getVariableValue", () => ({ path: { path: "f/demo/secret" } })],
  ["existsVariable", () => ({ path: { path: "f/demo/secret" } })],
  ["listResource", () => ({})],
  ["getResource", () => ({ path: { path: "f/demo/db" } })],
  ["getResourceValueInterpolated", () => ({ path: { path: "f/demo/db" } })],
  ["existsResource", () => ({ path: { path: "f/demo/db" } })],
  ["fileResourceTypeToFileExtMap", () => ({})],
  ["listResourceType", () => ({})],
  ["getResourceType", () => ({ path: { path: "compat_kind" } })],
  ["existsResourceType", () => ({ path: { path: "compat_kind" } })],
  // Schedules, folders, groups.
  ["listSchedules", () => ({})],
  ["getSchedule", () => ({ path: { path: "f/demo/nightly" } })],
  ["existsSchedule", () => ({ path: { path: "f/demo/nightly" } })],
  ["listFolders", () => ({})],
  ["getFolder", () => ({ path: { name: "demo" } })],
  ["existsFolder", () => ({ path: { name: "demo" } })],
  ["listGroups", () => ({})],
  ["getGroup", () => ({ path: { name: "ops" } })],
  // Jobs (read).
  ["listJobs", () => ({})],
  ["listQueue", () => ({})],
  ["listCompletedJobs", () => ({})],
  ["getJob", (w) => ({ path: { id: w.job } })],
  ["getJobUpdates", (w) => ({ path: { id: w.job }, query: { running: "false", log_offset: "0" } })],
  ["getCompletedJob", (w) => ({ path: { id: w.job } })],
  ["getCompletedJobResult", (w) => ({ path: { id: w.job } })],
  ["getCompletedJobResultMaybe", (w) => ({ path: { id: w.job } })],
  ["getJobLogs", (w) => ({ path: { id: w.job } })],
  ["getRootJobId", (w) => ({ path: { id: w.job } })],
  ["getJobProgress", (w) => ({ path: { id: w.job } })],
  ["exportCompletedJobs", () => ({})],
  ["exportQueuedJobs", () => ({})],
  ["getResumeUrls", (w) => ({ path: { id: w.flowJob, resume_id: "0" } })],
  ["getFlowUserState", (w) => ({ path: { id: w.flowJob, key: "compat" } })],
  ["getQueuePosition", () => ({ path: { scheduled_for: String(Date.now() + 3_600_000) } })],
  [
    "getSlackApprovalPayload",
    (w) => ({ path: { id: w.flowJob }, query: { slack_resource_path: "f/demo/slack", channel_id: "C1" } }),
  ],
  [
    "getTeamsApprovalPayload",
    (w) => ({ path: { id: w.flowJob }, query: { team_name: "team", channel_name: "general" } }),
  ],
  ["getWacApprovalUrls", (w) => ({ path: { id: w.flowJob, step_key: "a" } })],
  // Jobs (run).
  ["runScriptByPath", () => ({ path: { path: "f/demo/hello" }, body: { name: "path" } })],
  ["runScriptByHash", (w) => ({ path: { hash: w.scriptHash }, body: { name: "hash" } })],
  ["runFlowByPath", () => ({ path: { path: "f/demo/flow" }, body: {} })],
  ["runScriptPreview", () => ({ body: { content: PY, language: "python3", args: { name: "preview" } } })],
  ["runFlowPreview", () => ({ body: { value: flowValue("preview"), args: {} } })],
  [
    "runRawScriptDependenciesAsync",
    // The generated type names the path `path`; wmill sends it as `script_path`: both here.
    () => ({
      body: {
        raw_scripts: [
          { raw_code: PY, path: "f/demo/hello", script_path: "f/demo/hello", language: "python3" },
        ],
        entrypoint: "f/demo/hello",
      },
    }),
  ],
  ["runFlowDependenciesAsync", () => ({ body: { path: "f/demo/flow", flow_value: flowValue("deps") } })],
  [
    "batchReRunJobs",
    (w) => ({ body: { job_ids: [w.job], script_options_by_path: {}, flow_options_by_path: {} } }),
  ],
  ["restartFlowAtStep", (w) => ({ path: { id: w.flowJob }, body: { step_id: "a" } })],
  ["setJobProgress", (w) => ({ path: { id: w.job }, body: { percent: 50 } })],
  ["setFlowUserState", (w) => ({ path: { id: w.flowJob, key: "compat" }, body: { seen: true } })],
  ["cancelQueuedJob", (w) => ({ path: { id: w.later.queued ?? "" }, body: { reason: "compat probe" } })],
  ["deleteJobs", (w) => ({ body: [w.later.queued ?? ""] })],
  ["importCompletedJobs", () => ({ body: [] })],
  ["importQueuedJobs", () => ({ body: [] })],
  // Writes.
  [
    "createScript",
    () => ({
      body: { path: "f/demo/made", summary: "", description: "", content: PY_MADE, language: "python3" },
    }),
  ],
  ["archiveScriptByPath", () => ({ path: { path: "f/demo/made" } })],
  [
    "createFlow",
    () => ({
      body: {
        path: "f/demo/made_flow",
        summary: "Made",
        description: "",
        value: flowValue("made"),
        schema: flowSchema,
      },
    }),
  ],
  [
    "updateFlow",
    () => ({
      path: { path: "f/demo/made_flow" },
      body: {
        path: "f/demo/made_flow",
        summary: "Made again",
        description: "",
        value: flowValue("again"),
        schema: flowSchema,
      },
    }),
  ],
  ["archiveFlowByPath", () => ({ path: { path: "f/demo/made_flow" }, body: { archived: true } })],
  [
    "createVariable",
    () => ({ body: { path: "f/demo/made_var", value: "one", is_secret: false, description: "" } }),
  ],
  ["updateVariable", () => ({ path: { path: "f/demo/made_var" }, body: { value: "two" } })],
  [
    "createResourceType",
    () => ({ body: { name: "made_kind", schema: { type: "object", properties: {} }, description: "" } }),
  ],
  [
    "updateResourceType",
    () => ({
      path: { path: "made_kind" },
      body: { schema: { type: "object", properties: {} }, description: "Made" },
    }),
  ],
  [
    "createResource",
    () => ({
      body: { path: "f/demo/made_res", value: { host: "a" }, resource_type: "compat_kind", description: "" },
    }),
  ],
  ["updateResource", () => ({ path: { path: "f/demo/made_res" }, body: { description: "Made" } })],
  ["updateResourceValue", () => ({ path: { path: "f/demo/made_res" }, body: { value: { host: "b" } } })],
  [
    "createSchedule",
    () => ({
      body: {
        path: "f/demo/made_sched",
        schedule: "0 0 4 * * *",
        timezone: "UTC",
        script_path: "f/demo/hello",
        is_flow: false,
        args: {},
        enabled: false,
      },
    }),
  ],
  [
    "updateSchedule",
    () => ({
      path: { path: "f/demo/made_sched" },
      body: { schedule: "0 0 5 * * *", timezone: "UTC", args: {} },
    }),
  ],
  ["setScheduleEnabled", () => ({ path: { path: "f/demo/made_sched" }, body: { enabled: false } })],
  ["createFolder", () => ({ body: { name: "made" } })],
  ["updateFolder", () => ({ path: { name: "made" }, body: { summary: "Made" } })],
  ["createGroup", () => ({ body: { name: "made", summary: "Made" } })],
  ["updateGroup", () => ({ path: { name: "made" }, body: { summary: "Made again" } })],
  ["addUserToGroup", (w) => ({ path: { name: "ops" }, body: { username: w.bob } })],
  ["removeUserToGroup", (w) => ({ path: { name: "ops" }, body: { username: w.bob } })],
  // Millrace grants access per folder and group (not per item): the kinds it takes.
  [
    "addGranularAcls",
    () => ({ path: { kind: "folder", path: "demo" }, body: { owner: "g/ops", write: false } }),
  ],
  ["removeGranularAcls", () => ({ path: { kind: "folder", path: "demo" }, body: { owner: "g/ops" } })],
  ["addUser", (w) => ({ body: { email: w.carolEmail, is_admin: false, operator: false } })],
  ["updateUser", (w) => ({ path: { username: w.bob }, body: { is_admin: false, operator: false } })],
  ["createToken", () => ({ body: { label: "compat probe" } })],
  ["listTokens", () => ({ query: { exclude_ephemeral: "true" } })],
  [
    "createUserGlobally",
    () => ({
      body: { email: "dave@example.com", password: "compat-password-2", super_admin: false, name: "Dave" },
    }),
  ],
  ["createWorkspace", () => ({ body: { id: "compatmade", name: "Compat made" } })],
  [
    "createWorkspaceDependencies",
    (w) => ({ body: { workspace_id: w.ws, language: "python3", content: "requests==2.32.3\n" } }),
  ],
  ["getLatestWorkspaceDependencies", () => ({ path: { language: "python3" } })],
  ["changeWorkspaceColor", () => ({ body: { color: "#336699" } })],
  ["editAutoInvite", () => ({ body: { operator: false, invite_all: false, auto_add: false } })],
  ["editWebhook", () => ({ body: {} })],
  ["editErrorHandler", () => ({ body: {} })],
  ["editSuccessHandler", () => ({ body: {} })],
  ["editDefaultScripts", () => ({ body: {} })],
  ["editCopilotConfig", () => ({ body: {} })],
  ["editInstanceGroups", () => ({ body: { groups: [], roles: {} } })],
  // The seeded s3 resource (an s3rver the test started) as the workspace's storage, for the
  // object storage helpers below.
  [
    "editLargeFileStorageConfig",
    () => ({ body: { large_file_storage: { type: "S3Storage", s3_resource_path: "$res:f/demo/s3" } } }),
  ],
  ["editWorkspaceGitSyncConfig", () => ({ body: {} })],
  ["editSlackCommand", () => ({ body: {} })],
  ["workspaceMuteCriticalAlertsUi", () => ({ body: { mute_critical_alerts: false } })],
  [
    "updateOperatorSettings",
    () => ({
      body: {
        runs: true,
        schedules: true,
        resources: true,
        variables: true,
        assets: true,
        audit_logs: true,
        triggers: true,
        groups: true,
        folders: true,
        workers: true,
      },
    }),
  ],
  ["getWorkspaceEncryptionKey", () => ({})],
  [
    "setWorkspaceEncryptionKey",
    () => ({ body: { new_key: "compat-key-0123456789abcdefghijklmn", skip_reencrypt: false } }),
  ],
  [
    "setWorkspaceSlackOauthConfig",
    () => ({ body: { slack_oauth_client_id: "id", slack_oauth_client_secret: "secret" } }),
  ],
  ["deleteWorkspaceSlackOauthConfig", () => ({})],
  ["connectSlack", () => ({ body: { bot_token: "xoxb-compat", team_id: "T1", team_name: "Team" } })],
  ["disconnectSlack", () => ({})],
  // An OIDC token is for a job: asked from inside one, as windmill-client's getIdToken asks it.
  ["getOidcToken", () => ({ path: { audience: "compat" }, fromJob: true })],
  ["createWorkspaceFork", () => ({ body: { id: "compatfork", name: "Compat fork" } })],
  ["createWorkspaceForkGitBranch", () => ({ body: { id: "compatfork", name: "Compat fork" } })],
  ["compareWorkspaces", () => ({ path: { target_workspace_id: "compatfork" } })],
  ["resetDiffTally", () => ({ path: { fork_workspace_id: "compatfork" } })],
  // Object storage helpers of windmill-client.
  ["s3ResourceInfo", () => ({ body: {} })],
  [
    "fileUpload",
    () => ({
      query: { file_key: "compat/file.txt" },
      rawBody: "hello",
      contentType: "application/octet-stream",
    }),
  ],
  ["fileDownload", () => ({ query: { file_key: "compat/file.txt" } })],
  ["deleteS3File", () => ({ query: { file_key: "compat/file.txt" } })],
  // Deletes of what the writes made.
  ["deleteWorkspaceDependencies", () => ({ path: { language: "python3" } })],
  ["deleteToken", (w) => ({ path: { token_prefix: w.later.tokenPrefix ?? "" } })],
  ["deleteUser", () => ({ path: { username: "carol" } })],
  ["globalUserDelete", () => ({ path: { email: "dave@example.com" } })],
  ["deleteGroup", () => ({ path: { name: "made" } })],
  ["deleteFolder", () => ({ path: { name: "made" } })],
  ["deleteSchedule", () => ({ path: { path: "f/demo/made_sched" } })],
  ["deleteResource", () => ({ path: { path: "f/demo/made_res" } })],
  ["deleteResourceType", () => ({ path: { path: "made_kind" } })],
  ["deleteVariable", () => ({ path: { path: "f/demo/made_var" } })],
  ["deleteFlowByPath", () => ({ path: { path: "f/demo/made_flow" } })],
  ["deleteWorkspace", () => ({ path: { workspace: "compatmade" } })],
];

/** `/w/{workspace}/scripts/get/p/{path}` with the call's parameters (`path` keeps its slashes). */
export function fillPath(template: string, ws: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === "workspace" && params.workspace === undefined) return ws;
    const value = params[name];
    if (value === undefined) throw new Error(`fixture gives no ${name} for ${template}`);
    return name === "path" ? value.split("/").map(encodeURIComponent).join("/") : encodeURIComponent(value);
  });
}

// A python job that makes one call with its WM_TOKEN and answers what came back.
const CALL_FROM_JOB = `import os, urllib.request, urllib.error

def main(method: str, path: str):
    request = urllib.request.Request(
        os.environ["BASE_INTERNAL_URL"] + path,
        method=method,
        headers={"Authorization": "Bearer " + os.environ["WM_TOKEN"]},
    )
    try:
        with urllib.request.urlopen(request) as answer:
            return {"status": answer.status, "type": answer.headers.get("content-type") or "", "body": answer.read().decode()}
    except urllib.error.HTTPError as error:
        return {"status": error.code, "type": error.headers.get("content-type") or "", "body": error.read().decode()}
`;

/** The answer to `method path` made by a preview job with its own token. */
async function fromJob(
  baseUrl: string,
  token: string,
  ws: string,
  method: string,
  path: string,
): Promise<Response> {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const started = await fetch(`${baseUrl}/api/w/${ws}/jobs/run/preview`, {
    method: "POST",
    headers,
    body: JSON.stringify({ content: CALL_FROM_JOB, language: "python3", args: { method, path } }),
  });
  if (!started.ok)
    throw new Error(`the calling job did not start: ${started.status} ${await started.text()}`);
  const id = (await started.text()).trim();
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const maybe = (await (
      await fetch(`${baseUrl}/api/w/${ws}/jobs_u/completed/get_result_maybe/${id}`, { headers })
    ).json()) as {
      completed: boolean;
      success?: boolean;
      result?: { status: number; type: string; body: string };
    };
    if (maybe.completed) {
      if (!maybe.result?.status) throw new Error(`the calling job failed: ${JSON.stringify(maybe.result)}`);
      return new Response(maybe.result.body, {
        status: maybe.result.status,
        headers: { "content-type": maybe.result.type },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error("the calling job did not finish");
}

/** Calls one endpoint and judges the answer against its generated type. */
export async function probe(
  baseUrl: string,
  token: string,
  endpoint: { method: string; path: string },
  world: World,
  call: Call,
  expected: { status: number; shape: Shape } | undefined,
): Promise<ProbeResult & { body: unknown }> {
  const url = new URL(`${baseUrl}/api${fillPath(endpoint.path, world.ws, call.path ?? {})}`);
  for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.set(name, value);
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  let body: string | undefined;
  if (call.rawBody !== undefined) {
    body = call.rawBody;
    headers["content-type"] = call.contentType ?? "text/plain";
  } else if (call.body !== undefined) {
    body = JSON.stringify(call.body);
    headers["content-type"] = "application/json";
  }
  const response = call.fromJob
    ? await fromJob(baseUrl, token, world.ws, endpoint.method, url.pathname + url.search)
    : await fetch(url, { method: endpoint.method, headers, body });
  const text = await response.text();
  const isJson = /json/.test(response.headers.get("content-type") ?? "");
  let parsed: unknown = text;
  if (isJson) {
    try {
      parsed = JSON.parse(text);
    } catch {
      return {
        ok: false,
        status: response.status,
        problem: "answer says JSON but does not parse",
        body: text,
      };
    }
  }
  if (response.status < 200 || response.status >= 300) {
    const excerpt = text.replace(/\s+/g, " ").slice(0, 100);
    return {
      ok: false,
      status: response.status,
      problem: `${response.status} ${excerpt}`.trim(),
      body: parsed,
    };
  }
  const shape = expected?.shape ?? { kind: "any" };
  // A text answer stands for a `string` type (the generated client hands it over as text), and a
  // non-JSON one for a file's bytes.
  const textual = shape.kind === "string" || shape.kind === "binary";
  const judged = !isJson && textual ? [] : checkShape(parsed, shape);
  if (!isJson && !textual && shape.kind !== "any") judged.unshift("answer is not JSON");
  return {
    ok: judged.length === 0,
    status: response.status,
    problem: judged.slice(0, 3).join("; "),
    body: parsed,
  };
}
