import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AppError } from "./errors.ts";
import { createApiToken, principalFromBearer } from "./auth/tokens.ts";
import type { Principal } from "./auth/principal.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "./testing.ts";
import { membershipFromBearer, requireMembership } from "./workspaces.ts";

const SECRET = "workspaces-test-superadmin-secret";

let services: TestServices;
let alice: Principal;
let bob: Principal;

describe("membership of a bearer token, in one query", () => {
  before(async () => {
    services = await createTestServices();
    ({ principal: alice } = await createTestMember(services, "alpha"));
    ({ principal: bob } = await createTestMember(services, "beta"));
  });
  after(() => services.close());

  it("resolves what principalFromBearer then requireMembership resolve", async () => {
    const token = await createApiToken(services, alice, { label: "t" });
    const combined = await membershipFromBearer(services, token, SECRET, "alpha");
    const separate = await requireMembership(
      services,
      await principalFromBearer(services, token, SECRET),
      "alpha",
    );
    assert.deepEqual(combined, separate);
    assert.equal(combined.role, "admin");
    const admin = await membershipFromBearer(services, SECRET, SECRET, "beta");
    assert.equal(admin.role, "admin", "the superadmin secret administers every workspace");
  });

  it("refuses unknown, expired and disabled tokens, and hides workspaces the caller is not in", async () => {
    const token = await createApiToken(services, alice, { label: "t" });
    await rejectsWith(membershipFromBearer(services, "no-such-token", SECRET, "alpha"), "UNAUTHORIZED");
    await rejectsWith(membershipFromBearer(services, token, SECRET, "beta"), "NOT_FOUND");
    await rejectsWith(membershipFromBearer(services, token, SECRET, "nowhere"), "NOT_FOUND");
    const scoped = await createApiToken(services, bob, { label: "scoped", workspaceId: "beta" });
    await services.db.workspaceMember.create({
      data: { workspaceId: "alpha", userId: bob.userId, role: "operator" },
    });
    assert.equal((await membershipFromBearer(services, scoped, SECRET, "beta")).role, "admin");
    await rejectsWith(
      membershipFromBearer(services, scoped, SECRET, "alpha"),
      "NOT_FOUND",
      undefined,
      /alpha/,
    );
    const expiring = await createApiToken(services, alice, { label: "old" });
    await services.pool.query(
      "UPDATE api_token SET expires_at = localtimestamp - interval '1 minute' WHERE label = 'old'",
    );
    await rejectsWith(membershipFromBearer(services, expiring, SECRET, "alpha"), "UNAUTHORIZED");
    const carol = await createTestMember(services, "gamma");
    const carols = await createApiToken(services, carol.principal, { label: "c" });
    await services.pool.query(`UPDATE "user" SET disabled = true WHERE id = $1`, [carol.principal.userId]);
    await rejectsWith(membershipFromBearer(services, carols, SECRET, "gamma"), "UNAUTHORIZED");
  });

  it("vets the principal before deciding the membership", async () => {
    const token = await createApiToken(services, alice, { label: "t" });
    const forbid = () => {
      throw new AppError("FORBIDDEN", "not this call");
    };
    await rejectsWith(membershipFromBearer(services, token, SECRET, "beta", forbid), "FORBIDDEN");
    const vetted = await membershipFromBearer(services, token, SECRET, "alpha", (p) => ({
      ...p,
      ip: "10.0.0.1",
    }));
    assert.equal(vetted.principal.ip, "10.0.0.1");
  });
});
