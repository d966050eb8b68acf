import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { discardDraft, getDraft, NEW_SCRIPT_DRAFT, saveDraft } from "./drafts.ts";
import { deployScript } from "./scripts.ts";
import { createTestMember, createTestServices, type TestServices, rejectsWith } from "./testing.ts";
import { requireMembership, type Membership } from "./workspaces.ts";

let services: TestServices;
let alice: Membership;
let bob: Membership;
let aliceElsewhere: Membership;

describe("drafts", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership: alice } = await createTestMember(services, "drafts-a"));
    ({ membership: bob } = await createTestMember(services, "drafts-a"));
    // Alice in a second workspace of her own.
    await createTestMember(services, "drafts-b");
    await services.db.workspaceMember.create({
      data: { workspaceId: "drafts-b", userId: alice.principal.userId, role: "admin" },
    });
    aliceElsewhere = await requireMembership(services, alice.principal, "drafts-b");
  });
  after(() => services?.close());

  it("keeps a draft for its author only: another user neither reads nor overwrites it", async () => {
    const saved = await saveDraft(services, alice, {
      path: "f/ops/job",
      value: { language: "bash", content: "echo alice" },
    });
    assert.equal(saved.path, "f/ops/job");
    assert.equal((await getDraft(services, alice, "f/ops/job"))?.value.content, "echo alice");
    assert.equal(await getDraft(services, bob, "f/ops/job"), null, "bob does not see alice's draft");
    await saveDraft(services, bob, { path: "f/ops/job", value: { language: "bash", content: "echo bob" } });
    assert.equal((await getDraft(services, alice, "f/ops/job"))?.value.content, "echo alice", "still hers");
    assert.equal((await getDraft(services, bob, "f/ops/job"))?.value.content, "echo bob");
    await discardDraft(services, bob, "f/ops/job");
    assert.equal(await getDraft(services, bob, "f/ops/job"), null);
    assert.equal(
      (await getDraft(services, alice, "f/ops/job"))?.value.content,
      "echo alice",
      "bob's discard leaves hers",
    );
  });

  it("scopes drafts to the workspace, with one for a new script", async () => {
    await saveDraft(services, alice, { path: NEW_SCRIPT_DRAFT, value: { content: "new in a" } });
    assert.equal(await getDraft(services, aliceElsewhere, NEW_SCRIPT_DRAFT), null);
    assert.equal(await getDraft(services, aliceElsewhere, "f/ops/job"), null);
    await saveDraft(services, aliceElsewhere, { path: NEW_SCRIPT_DRAFT, value: { content: "new in b" } });
    assert.equal((await getDraft(services, alice, NEW_SCRIPT_DRAFT))?.value.content, "new in a");
    assert.equal((await getDraft(services, aliceElsewhere, NEW_SCRIPT_DRAFT))?.value.content, "new in b");
  });

  it("refuses a draft too large, naming the field", async () => {
    await rejectsWith(
      saveDraft(services, alice, { path: "f/ops/big", value: { content: "x".repeat(513 * 1024) } }),
      "INVALID_INPUT",
      "content",
      /at most 512 KiB/,
    );
    await rejectsWith(
      saveDraft(services, alice, {
        path: "f/ops/big",
        value: { content: "", summary: "y".repeat(70 * 1024) },
      }),
      "INVALID_INPUT",
      "value",
    );
    await rejectsWith(
      saveDraft(services, alice, { path: "f/ops/big", value: "text" }),
      "INVALID_INPUT",
      "value",
    );
    await rejectsWith(saveDraft(services, alice, { path: "nope", value: {} }), "INVALID_INPUT", "path");
    assert.equal(await getDraft(services, alice, "f/ops/big"), null);
  });

  it("refuses a path the caller may not write, and operators", async () => {
    await services.db.workspaceMember.update({
      where: { workspaceId_userId: { workspaceId: "drafts-a", userId: bob.principal.userId } },
      data: { role: "developer" },
    });
    const developer = await requireMembership(services, bob.principal, "drafts-a");
    await rejectsWith(
      saveDraft(services, developer, { path: `u/${alice.principal.username}/x`, value: {} }),
      "FORBIDDEN",
    );
    await services.db.workspaceMember.update({
      where: { workspaceId_userId: { workspaceId: "drafts-a", userId: bob.principal.userId } },
      data: { role: "operator" },
    });
    const operator = await requireMembership(services, bob.principal, "drafts-a");
    await rejectsWith(saveDraft(services, operator, { path: NEW_SCRIPT_DRAFT, value: {} }), "FORBIDDEN");
    await services.db.workspaceMember.update({
      where: { workspaceId_userId: { workspaceId: "drafts-a", userId: bob.principal.userId } },
      data: { role: "admin" },
    });
  });

  it("deletes the deployer's draft on deploy (and the new-script draft it names), nobody else's", async () => {
    await saveDraft(services, alice, { path: "f/ops/deployed", value: { content: "echo 1" } });
    await saveDraft(services, alice, { path: NEW_SCRIPT_DRAFT, value: { content: "echo 1" } });
    await saveDraft(services, bob, { path: "f/ops/deployed", value: { content: "echo bob" } });
    await deployScript(services, alice, {
      path: "f/ops/deployed",
      language: "bash",
      content: "echo 1",
      draftPath: NEW_SCRIPT_DRAFT,
    });
    assert.equal(await getDraft(services, alice, "f/ops/deployed"), null);
    assert.equal(await getDraft(services, alice, NEW_SCRIPT_DRAFT), null);
    assert.equal((await getDraft(services, bob, "f/ops/deployed"))?.value.content, "echo bob");
    assert.equal((await getDraft(services, aliceElsewhere, NEW_SCRIPT_DRAFT))?.value.content, "new in b");
  });
});
