import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { actionKind } from "../audit/list.ts";
import { can } from "../permissions.ts";
import { checkedRole, roleFromFlags } from "./members.ts";

describe("roles and audit kinds", () => {
  it("maps Windmill's is_admin / operator flags to a role, admin first", () => {
    assert.equal(roleFromFlags(true, true), "admin");
    assert.equal(roleFromFlags(false, true), "operator");
    assert.equal(roleFromFlags(false, false), "developer");
    assert.equal(roleFromFlags(undefined, undefined), "developer");
    assert.throws(() => roleFromFlags("yes", false), /is_admin: must be true or false/);
    assert.throws(() => checkedRole("owner"), /role: must be one of admin, developer, operator/);
  });

  it("keeps operators to running and reading", () => {
    for (const action of [
      "script.write",
      "job.preview",
      "member.manage",
      "folder.write",
      "governance.read",
    ] as const) {
      assert.equal(can("operator", action), false, action);
    }
    for (const action of ["script.read", "job.run", "audit.read", "folder.read"] as const) {
      assert.equal(can("operator", action), true, action);
    }
    assert.equal(can("developer", "member.manage"), false);
    assert.equal(can("developer", "audit.read_all"), false);
    assert.equal(can("admin", "audit.read_all"), true);
  });

  it("derives Windmill's action kinds from operations", () => {
    assert.equal(actionKind("scripts.create"), "Created");
    assert.equal(actionKind("scripts.update"), "Updated");
    assert.equal(actionKind("folder.delete"), "Delete");
    assert.equal(actionKind("group.removeuser"), "Delete");
    assert.equal(actionKind("group.adduser"), "Created");
    assert.equal(actionKind("jobs.run.script"), "Execute");
    assert.equal(actionKind("users.login_failure"), "Execute");
    assert.equal(actionKind("variables.decrypt_secret"), "Execute");
    assert.equal(actionKind("users.token.create"), "Created");
  });
});
