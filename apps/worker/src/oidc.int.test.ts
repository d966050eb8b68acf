// OIDC ID tokens for jobs: a bun job asks windmill-client's getIdToken for one, and the token
// checks out against the issuer's published keys (as a cloud provider checks it), with claims
// naming that job, its script, its user and workspace. Only a job's own token gets one.
import assert from "node:assert/strict";
import { createPublicKey, verify } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { createApiToken, deployScript, runScriptByPath, waitForJob, type Membership } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "./testing.ts";

const KEY = "oidc-test-instance-key-0123456789abcdefgh";
const BASE_URL = "https://millrace.example";
const WORKSPACE = "oidc";

function decode(part: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(part, "base64url").toString()) as Record<string, unknown>;
}

describe("OIDC ID tokens for jobs", () => {
  let services: TestServices;
  let membership: Membership;
  let api: TestApi;
  let worker: TestWorker;

  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, WORKSPACE));
    // The issuer is the instance's public URL (what providers fetch the keys from).
    process.env.BASE_URL = BASE_URL;
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, {
      BASE_INTERNAL_URL: api.url,
      MILLRACE_SECRET_KEY: KEY,
    });
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
  });

  it("a job's getIdToken is signed by the issuer's published key and names the job", async () => {
    const me = membership.principal.username;
    const path = `u/${me}/who_am_i`;
    await deployScript(services, membership, {
      path,
      language: "bun",
      content:
        'import * as wmill from "windmill-client";\n\nexport async function main() {\n  return await wmill.getIdToken("sts.amazonaws.com", 600);\n}\n',
    });
    const id = await runScriptByPath(services, membership, path, {});
    const job = await waitForJob(services, membership, id, 60_000);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    const token = job.result as string;
    const [header, payload, signature] = token.split(".");

    const discovery = (await (
      await fetch(`${api.url}/api/oidc/.well-known/openid-configuration`)
    ).json()) as {
      issuer: string;
      jwks_uri: string;
    };
    assert.equal(discovery.issuer, `${BASE_URL}/api/oidc/`);
    assert.equal(discovery.jwks_uri, `${BASE_URL}/api/oidc/jwks`);
    const { keys } = (await (await fetch(`${api.url}/api/oidc/jwks`)).json()) as {
      keys: Record<string, string>[];
    };
    const jwk = keys.find((key) => key.kid === decode(header!).kid);
    assert.ok(jwk, "the token's key is published");
    const publicKey = createPublicKey({ key: jwk, format: "jwk" });
    const checks = (signed: string) =>
      verify(
        "sha256",
        Buffer.from(signed),
        { key: publicKey, dsaEncoding: "ieee-p1363" },
        Buffer.from(signature!, "base64url"),
      );
    assert.equal(checks(`${header}.${payload}`), true, "the signature checks out");
    const forged = Buffer.from(JSON.stringify({ ...decode(payload!), aud: "other" })).toString("base64url");
    assert.equal(checks(`${header}.${forged}`), false, "a changed claim does not");

    const claims = decode(payload!);
    assert.equal(decode(header!).alg, "ES256");
    assert.equal(claims.iss, `${BASE_URL}/api/oidc/`);
    assert.equal(claims.aud, "sts.amazonaws.com");
    assert.equal(claims.job_id, id);
    assert.equal(claims.path, path);
    assert.equal(claims.workspace, WORKSPACE);
    assert.equal(claims.sub, `${membership.principal.email}::${path}::::${WORKSPACE}`);
    assert.equal(Number(claims.exp) - Number(claims.iat), 600);
  });

  it("is refused to a token that is not a job's", async () => {
    const token = await createApiToken(services, membership.principal, { label: "not a job" });
    const response = await fetch(`${api.url}/api/w/${WORKSPACE}/oidc/token/sts.amazonaws.com`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(response.status, 403);
    assert.match(await response.text(), /issued to a job/);
  });
});
