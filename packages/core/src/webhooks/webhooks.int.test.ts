import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { principalFromBearer } from "../auth/tokens.ts";
import { runScriptByPath } from "../jobs/run.ts";
import { deployScript } from "../scripts.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import { createUser, principalOf } from "../users.ts";
import { requireMembership, type Membership } from "../workspaces.ts";
import { webhookArgs } from "./body.ts";
import { assertCallAllowed } from "./scope.ts";
import { createWebhookToken, listWebhookTokens, revokeWebhookToken } from "./tokens.ts";

let services: TestServices;
let membership: Membership;
let me: string;

describe("webhook tokens", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "hooks"));
    await createTestMember(services, "elsewhere");
    me = membership.principal.username;
    for (const name of ["hook", "other"]) {
      await deployScript(services, membership, {
        path: `u/${me}/${name}`,
        language: "bash",
        content: 'body="$1"\necho "$body"',
      });
    }
  });
  after(() => services?.close());

  it("runs its own script, with a wrapped body, and nothing else", async () => {
    const token = await createWebhookToken(services, membership, { path: `u/${me}/hook` });
    const stored = await services.db.apiToken.findFirstOrThrow({
      where: { tokenPrefix: token.slice(0, 10) },
    });
    assert.equal(stored.kind, "webhook");
    assert.notEqual(stored.tokenHash, token, "only the hash is stored");

    const principal = await principalFromBearer(services, token, undefined);
    assert.equal(principal.pathScope, `u/${me}/hook`);
    assert.equal(principal.workspaceScope, "hooks");
    const asHook = await requireMembership(services, principal, "hooks");
    const id = await runScriptByPath(services, asHook, `u/${me}/hook`, webhookArgs("text/plain", "ping"));
    const job = await services.db.job.findUniqueOrThrow({ where: { id } });
    assert.deepEqual(job.args, { body: "ping" });
    assert.equal(job.createdBy, me, "runs as the token's creator");

    await rejectsWith(runScriptByPath(services, asHook, `u/${me}/other`, {}), "FORBIDDEN");
    await rejectsWith(requireMembership(services, principal, "elsewhere"), "NOT_FOUND");
    assert.throws(() => assertCallAllowed(principal, "GET", "/api/w/hooks/scripts/list"), /webhook token/);
    await rejectsWith(
      createWebhookToken(services, asHook, { path: `u/${me}/other` }),
      "FORBIDDEN",
      undefined,
      /cannot create tokens/,
    );
  });

  it("is listed for its script, revoked by prefix, and refused after", async () => {
    const token = await createWebhookToken(services, membership, { path: `u/${me}/other`, label: "ci" });
    const listed = await listWebhookTokens(services, membership, `u/${me}/other`);
    assert.deepEqual(
      listed.map((t) => [t.tokenPrefix, t.label]),
      [[token.slice(0, 10), "ci"]],
    );
    assert.ok(!JSON.stringify(listed).includes(token), "lists never show the token");
    await revokeWebhookToken(services, membership, token.slice(0, 10));
    await rejectsWith(principalFromBearer(services, token, undefined), "UNAUTHORIZED");
    await rejectsWith(revokeWebhookToken(services, membership, token.slice(0, 10)), "NOT_FOUND");
    const { rows } = await services.pool.query<{ operation: string }>(
      "SELECT operation FROM audit_log WHERE workspace_id = 'hooks' AND resource = $1 AND operation LIKE 'webhooks.%' ORDER BY id",
      [`u/${me}/other`],
    );
    assert.deepEqual(
      rows.map((row) => row.operation),
      ["webhooks.token.create", "webhooks.token.delete"],
    );
  });

  it("is only created for a script the caller can see", async () => {
    const user = await createUser(services, { email: "dev@example.com", password: "password123" });
    await services.db.workspaceMember.create({
      data: { workspaceId: "hooks", userId: user.id, role: "developer" },
    });
    const developer = await requireMembership(services, principalOf(user), "hooks");
    await rejectsWith(createWebhookToken(services, developer, { path: `u/${me}/hook` }), "NOT_FOUND");
    await rejectsWith(createWebhookToken(services, membership, { path: `u/${me}/missing` }), "NOT_FOUND");
    await rejectsWith(
      createWebhookToken(services, membership, {
        path: `u/${me}/hook`,
        expiresAt: new Date(Date.now() - 1000),
      }),
      "INVALID_INPUT",
      "expiration",
    );
  });
});
