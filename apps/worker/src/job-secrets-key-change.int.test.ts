// A secret read by a job's token is announced to the workers with its stored (encrypted) value.
// When the workspace's key has changed since (setWorkspaceEncryptionKey), a worker that never held
// the old key still masks it: it reads the value stored now, the same secret under the new key.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { createKeyring, createVariable, getVariable, setWorkspaceEncryptionKey } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { secretReadByJob, watchJobSecrets } from "./job-secrets.ts";

const KEY = "job-secrets-key-change-instance-key-0123456789";

describe("a secret read announced to the workers, across a workspace key change", () => {
  let services: TestServices;
  before(async () => {
    services = await createTestServices();
  });
  after(() => services?.close());

  it("is masked by a worker that never held the old key", async () => {
    const server = { ...services, secrets: createKeyring(KEY) };
    const { membership } = await createTestMember(services, "masked");
    const user = membership.principal.username;
    const path = `u/${user}/token`;
    await createVariable(server, membership, { path, value: "very-secret-token", isSecret: true });
    const announced = (
      await getVariable(server, membership, path, { decryptSecret: false, includeEncrypted: true })
    ).value!;
    await setWorkspaceEncryptionKey(server, membership, {
      newKey: "a-new-workspace-key-0123456789abcdefghij",
    });

    const worker = { pool: services.pool, secrets: createKeyring(KEY) };
    const job = watchJobSecrets({ id: randomUUID(), workspaceId: "masked", permissionedAs: `u/${user}` });
    try {
      secretReadByJob(worker, JSON.stringify({ w: "masked", u: user, p: path, v: announced }));
      await job.secrets.settled();
      assert.doesNotMatch(job.secrets.masker.mask("got very-secret-token here"), /very-secret-token/);
    } finally {
      job.release();
    }
  });
});
