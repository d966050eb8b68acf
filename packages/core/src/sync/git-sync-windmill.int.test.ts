// Windmill's git sync settings (what `wmill sync push --include-settings` sends) applied to
// Millrace's git sync: the git_repository resource's url (its token stored apart, encrypted),
// branch and the kinds to commit; no repository unlinks; what Millrace cannot do is refused.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createResource } from "../resources/resources.ts";
import { createKeyring } from "../secrets/index.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import { getGitSyncStatus } from "./git-sync.ts";
import { applyWindmillGitSyncSettings } from "./git-sync-windmill.ts";

const KEY = "git-sync-windmill-instance-key-0123456789";

describe("Windmill's git sync settings on Millrace's git sync", () => {
  let services: TestServices;

  before(async () => {
    services = await createTestServices();
  });
  after(async () => {
    await services?.close();
  });

  it("links the workspace to the repository a git_repository resource names, and unlinks it", async () => {
    const ctx = { ...services, secrets: createKeyring(KEY) };
    const { membership } = await createTestMember(services, "gitwindmill");
    const me = membership.principal.username;
    await createResource(ctx, membership, {
      path: `u/${me}/repo`,
      resourceType: "git_repository",
      value: { url: "https://bot:ghp_secret_token@git.example.com/acme/ops.git", branch: "prod" },
    });
    const repository = (settings: Record<string, unknown> = {}) => ({
      git_repo_resource_path: `$res:u/${me}/repo`,
      settings: { include_path: ["f/**"], include_type: ["script", "flow", "app", "variable"], ...settings },
    });
    await applyWindmillGitSyncSettings(ctx, membership, { repositories: [repository()] });
    const linked = (await getGitSyncStatus(ctx, membership)).settings!;
    assert.equal(linked.remote_url, "https://git.example.com/acme/ops.git");
    assert.equal(linked.branch, "prod");
    assert.equal(linked.username, "bot");
    assert.equal(linked.has_secret, true);
    assert.deepEqual(linked.include_kinds, ["scripts", "flows", "variables"]);
    assert.ok(!JSON.stringify(linked).includes("ghp_secret_token"), "the token is never answered");

    await rejectsWith(
      applyWindmillGitSyncSettings(ctx, membership, { repositories: [repository(), repository()] }),
      "INVALID_INPUT",
      "git_sync_settings.repositories.1",
    );
    await rejectsWith(
      applyWindmillGitSyncSettings(ctx, membership, {
        repositories: [repository({ include_path: ["f/ops/**"] })],
      }),
      "INVALID_INPUT",
      "git_sync_settings.repositories.0.settings.include_path",
    );
    await rejectsWith(
      applyWindmillGitSyncSettings(ctx, membership, {
        repositories: [repository({ include_type: ["app"] })],
      }),
      "INVALID_INPUT",
      "git_sync_settings.repositories.0.settings.include_type",
    );
    assert.equal(
      (await getGitSyncStatus(ctx, membership)).settings?.branch,
      "prod",
      "refusals change nothing",
    );

    await applyWindmillGitSyncSettings(ctx, membership, {});
    assert.equal((await getGitSyncStatus(ctx, membership)).settings, null);
    await applyWindmillGitSyncSettings(ctx, membership, { repositories: [] });
  });
});
