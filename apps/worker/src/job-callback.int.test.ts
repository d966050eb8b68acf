// A job calls Millrace back with its WM_TOKEN: windmill-client from a bun script and the bundled
// `wmill` module from a python3 script read a secret variable and a resource, and keep state,
// through the real REST routes of the web app served over HTTP.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  createKeyring,
  createResource,
  createVariable,
  deployScript,
  runScriptByPath,
  waitForJob,
  type Membership,
  type SecretsContext,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "./testing.ts";

const KEY = "worker-test-instance-key-0123456789abcdef";
const SECRET = "the-api-secret-9f8e7d";
// Scripts return secrets reversed: a secret's own value is masked in a job's result.
const REVERSED = [...SECRET].reverse().join("");

let services: TestServices;
let ctx: SecretsContext;
let membership: Membership;
let me: string;
let worker: TestWorker;
let api: TestApi | undefined;

async function run(path: string, language: string, content: string, args: Record<string, unknown> = {}) {
  await deployScript(services, membership, { path, language, content });
  const id = await runScriptByPath(services, membership, path, args);
  return waitForJob(services, membership, id, 60_000);
}

describe("jobs call back with WM_TOKEN", () => {
  before(async () => {
    services = await createTestServices();
    ctx = { ...services, secrets: createKeyring(KEY) };
    ({ membership } = await createTestMember(services, "acme"));
    me = membership.principal.username;
    await createTestMember(services, "elsewhere");
    await createVariable(ctx, membership, { path: `u/${me}/api_secret`, value: SECRET, isSecret: true });
    await createResource(ctx, membership, {
      path: `u/${me}/db`,
      resourceType: "postgresql",
      value: {
        host: "db.internal",
        port: 5432,
        user: "app",
        dbname: "app",
        password: `$var:u/${me}/api_secret`,
      },
    });
    api = await startTestApi(services.database.url, KEY);
    const baseUrl = api.url;
    worker = await startTestWorker(services.database.url, { BASE_URL: baseUrl, MILLRACE_SECRET_KEY: KEY });
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
  });

  it("bun: windmill-client reads a secret and a resource, and keeps state between runs", async () => {
    const content = `import * as wmill from "windmill-client";

const rev = (text: string) => [...text].reverse().join("");

export async function main(db: { password: string }) {
  const secret = await wmill.getVariable("u/${me}/api_secret");
  const resource = await wmill.getResource("u/${me}/db");
  const before = await wmill.getState();
  await wmill.setState({ runs: (before?.runs ?? 0) + 1 });
  const other = await fetch(process.env.BASE_INTERNAL_URL + "/api/w/elsewhere/variables/list", {
    headers: { Authorization: "Bearer " + process.env.WM_TOKEN },
  });
  return { secret: rev(secret), host: resource.host, password: rev(resource.password), before,
    after: await wmill.getState(), arg: db, argPassword: rev(db.password), elsewhere: other.status,
    statePath: process.env.WM_STATE_PATH };
}
`;
    const first = await run(`u/${me}/client_ts`, "bun", content, { db: `$res:u/${me}/db` });
    assert.equal(first.status, "success", first.logs);
    const result = first.result as Record<string, unknown>;
    assert.equal(result.secret, REVERSED);
    assert.equal(result.host, "db.internal");
    assert.equal(result.password, REVERSED, "the resource's $var: reference is resolved");
    assert.equal(result.before, undefined, "no state on the first run");
    assert.deepEqual(result.after, { runs: 1 });
    assert.equal(result.argPassword, REVERSED, "$res: argument resolved");
    assert.equal((result.arg as { password: string }).password, "***", "and masked in the result");
    assert.equal(result.elsewhere, 404, "the token only works in the job's workspace");
    assert.equal(result.statePath, `u/${me}/state/u/${me}/client_ts`);
    assert.doesNotMatch(first.logs, new RegExp(SECRET));

    const secondId = await runScriptByPath(services, membership, `u/${me}/client_ts`, {
      db: `$res:u/${me}/db`,
    });
    const second = await waitForJob(services, membership, secondId, 60_000);
    assert.equal(second.status, "success", second.logs);
    assert.deepEqual((second.result as { before: unknown }).before, { runs: 1 });

    const audits = await services.pool.query(
      "SELECT 1 FROM audit_log WHERE operation = 'variables.decrypt_secret' AND actor = $1",
      [me],
    );
    assert.ok(audits.rowCount! >= 4, "each secret read by the job is audited");
    const tokens = await services.pool.query("SELECT 1 FROM api_token WHERE kind = 'job'");
    assert.equal(tokens.rowCount, 0, "job tokens are revoked when their job ends");
  });

  it("python3: the wmill module does the same", async () => {
    const job = await run(
      `u/${me}/client_py`,
      "python3",
      `import wmill

def main():
    before = wmill.get_state()
    wmill.set_state({"n": 1 if before is None else before["n"] + 1})
    return {
        "secret": wmill.get_variable("u/${me}/api_secret")[::-1],
        "password": wmill.get_resource("u/${me}/db")["password"][::-1],
        "before": before,
        "after": wmill.get_state(),
    }
`,
    );
    assert.equal(job.status, "success", job.logs);
    assert.deepEqual(job.result, { secret: REVERSED, password: REVERSED, before: null, after: { n: 1 } });
  });

  it("a job's token cannot mint a token that outlives the job", async () => {
    const content = `tokens() {
  curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $WM_TOKEN" \\
    -H 'content-type: application/json' -d "$1" "$BASE_INTERNAL_URL$2"
}
api=$(tokens '{"label":"escape"}' /api/users/tokens/create)
hook=$(tokens '{"path":"u/${me}/mint"}' /api/w/acme/webhooks/tokens/create)
echo "{\\"api\\": $api, \\"webhook\\": $hook}" > result.json
`;
    const job = await run(`u/${me}/mint`, "bash", content);
    assert.equal(job.status, "success", job.logs);
    assert.deepEqual(job.result, { api: 403, webhook: 403 });
    const { rowCount } = await services.pool.query(
      "SELECT 1 FROM api_token WHERE kind IN ('api', 'webhook')",
    );
    assert.equal(rowCount, 0, "no token was created");
  });

  it("a job with a concurrency limit (claimed on its own) gets a working token too", async () => {
    await deployScript(services, membership, {
      path: `u/${me}/limited_callback`,
      language: "bash",
      content: `curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $WM_TOKEN" "$BASE_INTERNAL_URL/api/w/acme/variables/list"`,
      concurrent_limit: 1,
    });
    const id = await runScriptByPath(services, membership, `u/${me}/limited_callback`, {});
    const job = await waitForJob(services, membership, id, 60_000);
    assert.equal(job.status, "success", job.logs);
    assert.equal(job.result, 200);
  });

  it("a job whose argument names a missing resource fails saying which", async () => {
    const job = await run(`u/${me}/missing_arg`, "bash", 'x="$1"\necho "$x"', { x: `$res:u/${me}/nope` });
    assert.equal(job.status, "failure");
    assert.match(JSON.stringify(job.result), /args\.x: resource u\/[a-z0-9_]+\/nope not found/);
    const tokens = await services.pool.query("SELECT 1 FROM api_token WHERE kind = 'job'");
    assert.equal(tokens.rowCount, 0);
  });
});
