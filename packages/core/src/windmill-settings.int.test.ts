// Windmill's workspace settings that Millrace has: the workspace color (stored, answered in the
// settings and workspace lists) and the operator settings (Millrace's fixed operator role:
// accepted as it is, refused naming the setting otherwise).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "./testing.ts";
import {
  changeWorkspaceColor,
  OPERATOR_SETTINGS,
  updateOperatorSettings,
  windmillWorkspaceSettings,
} from "./windmill-settings.ts";
import { listWorkspaces, requireMembership } from "./workspaces.ts";

describe("Windmill's workspace settings that Millrace has", () => {
  let services: TestServices;

  before(async () => {
    services = await createTestServices();
  });
  after(async () => {
    await services?.close();
  });

  it("keeps the workspace color, refuses one that is not #rrggbb, and clears it", async () => {
    const { membership, principal } = await createTestMember(services, "colored");
    await changeWorkspaceColor(services, membership, "#336699");
    const again = await requireMembership(services, principal, "colored");
    assert.equal(windmillWorkspaceSettings(again).color, "#336699");
    assert.equal(
      (await listWorkspaces(services, principal)).find((w) => w.id === "colored")?.color,
      "#336699",
    );
    await rejectsWith(changeWorkspaceColor(services, membership, "blue"), "INVALID_INPUT", "color");
    await changeWorkspaceColor(services, membership, "");
    const cleared = await requireMembership(services, principal, "colored");
    assert.equal(windmillWorkspaceSettings(cleared).color, undefined);
  });

  it("accepts the operator settings Millrace's role has and refuses another, naming it", async () => {
    const { membership } = await createTestMember(services, "operators");
    assert.deepEqual(windmillWorkspaceSettings(membership).operator_settings, OPERATOR_SETTINGS);
    updateOperatorSettings(membership, { runs: true, schedules: true, manage_schedules: false });
    assert.throws(
      () => updateOperatorSettings(membership, { variables: false }),
      (error: { field?: string; message: string }) =>
        error.field === "variables" && /operator role is fixed/.test(error.message),
    );
    assert.throws(() => updateOperatorSettings(membership, { fly: true }), { field: "fly" });
  });
});
