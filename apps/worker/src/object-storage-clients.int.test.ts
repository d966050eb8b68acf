// A workspace's object storage through Windmill's clients, unchanged: windmill-client's
// writeS3File / loadS3File / deleteS3File / denoS3LightClientSettings from a Node process and
// from a bun job, and the `wmill` module's write_s3_file / load_s3_file from a python3 job, all
// through the web app's REST routes served over HTTP, to a real S3-compatible server (s3rver).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  createApiToken,
  createKeyring,
  createResource,
  createVariable,
  deployScript,
  editLargeFileStorage,
  runScriptByPath,
  waitForJob,
  type Membership,
  type SecretsContext,
} from "@millrace/core";
import { createTestMember, createTestServices, startTestS3, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "./testing.ts";

const KEY = "worker-test-instance-key-0123456789abcdef";
const WORKSPACE = "objects";

let services: TestServices;
let ctx: SecretsContext;
let membership: Membership;
let me: string;
let s3: Awaited<ReturnType<typeof startTestS3>>;
let api: TestApi | undefined;
let worker: TestWorker | undefined;

async function run(path: string, language: string, content: string) {
  await deployScript(services, membership, { path, language, content });
  const id = await runScriptByPath(services, membership, path, {});
  return waitForJob(services, membership, id, 120_000);
}

describe("object storage through Windmill's clients", () => {
  before(async () => {
    services = await createTestServices();
    ctx = { ...services, secrets: createKeyring(KEY) };
    s3 = await startTestS3("objects");
    ({ membership } = await createTestMember(services, WORKSPACE));
    me = membership.principal.username;
    await createVariable(ctx, membership, { path: `u/${me}/s3_secret`, value: s3.secretKey, isSecret: true });
    await createResource(ctx, membership, {
      path: `u/${me}/s3`,
      resourceType: "s3",
      value: s3.resourceValue({ region: "eu-west-1", secretKey: `$var:u/${me}/s3_secret` }),
    });
    await editLargeFileStorage(ctx, membership, { type: "S3Storage", s3_resource_path: `$res:u/${me}/s3` });
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, { BASE_URL: api.url, MILLRACE_SECRET_KEY: KEY });
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await s3?.close();
    await services?.close();
  });

  it("windmill-client from a Node process writes, reads, lists settings of and deletes files", async () => {
    const token = await createApiToken(services, membership.principal, { label: "s3 client" });
    process.env.WM_WORKSPACE = WORKSPACE;
    const wmill = await import("windmill-client");
    wmill.setClient(token, api!.url);

    const written = await wmill.writeS3File({ s3: "node/hello.txt" }, "hello from node");
    assert.deepEqual(written, { s3: "node/hello.txt" });
    const loaded = await wmill.loadS3File({ s3: "node/hello.txt" });
    assert.equal(new TextDecoder().decode(loaded), "hello from node");

    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    const fresh = (await wmill.writeS3File(undefined, new Blob([bytes]))) as { s3: string };
    assert.match(fresh.s3, /^windmill_uploads\/[0-9a-f-]{36}$/);
    assert.deepEqual([...(await wmill.loadS3File(fresh))!], [...bytes]);

    const settings = await wmill.denoS3LightClientSettings(undefined);
    assert.deepEqual(settings, s3.resourceValue({ region: "eu-west-1" }));

    await wmill.deleteS3File(fresh);
    await assert.rejects(wmill.loadS3File(fresh), /404/);
  });

  it("bun: windmill-client in a job writes a file and reads it and one written before", async () => {
    const content = `import * as wmill from "windmill-client";

export async function main() {
  const written = await wmill.writeS3File({ s3: "bun/out.json" }, JSON.stringify({ rows: 3 }));
  const back = new TextDecoder().decode(await wmill.loadS3File(written));
  const blob = await wmill.loadS3FileStream({ s3: "node/hello.txt" });
  return { written, back: JSON.parse(back), node: await blob!.text() };
}
`;
    const job = await run(`u/${me}/s3_bun`, "bun", content);
    assert.equal(job.status, "success", `${job.logs}\n${JSON.stringify(job.result)}`);
    assert.deepEqual(job.result, {
      written: { s3: "bun/out.json" },
      back: { rows: 3 },
      node: "hello from node",
    });
  });

  it("python3: wmill writes bytes and text and reads them back as bytes", async () => {
    const content = `import wmill
from wmill import S3Object


def main():
    binary = wmill.write_s3_file(S3Object(s3="py/data.bin"), bytes([0, 1, 2, 255]))
    text = wmill.write_s3_file(None, "plain text", content_type="text/plain")
    return {
        "binary": binary,
        "binary_back": list(wmill.load_s3_file(binary)),
        "text_key": text["s3"].startswith("windmill_uploads/"),
        "text_back": wmill.load_s3_file_reader(text).read().decode(),
        "from_bun": wmill.load_s3_file("bun/out.json").decode(),
    }
`;
    const job = await run(`u/${me}/s3_py`, "python3", content);
    assert.equal(job.status, "success", `${job.logs}\n${JSON.stringify(job.result)}`);
    assert.deepEqual(job.result, {
      binary: { s3: "py/data.bin" },
      binary_back: [0, 1, 2, 255],
      text_key: true,
      text_back: "plain text",
      from_bun: '{"rows":3}',
    });
  });
});
