import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, test } from "@playwright/test";
import { E2E_ADMIN, E2E_BASE_URL } from "../instance.ts";
import { addMember, createAccount, deployScript, e2eDatabase } from "../fixtures/people.ts";
import { superadmin, uniqueWorkspace } from "./helpers.ts";

const script = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../fixtures/windmill-governance.py",
);

/** The lines the report prints for one workspace, from its header to the next one. */
function section(output: string, workspace: string): string {
  const start = output.indexOf(`(${workspace})\n`);
  expect(start, `no section for ${workspace} in:\n${output}`).toBeGreaterThan(-1);
  const next = output.indexOf("\n📁", start);
  return output.slice(start, next === -1 ? undefined : next);
}

test("seed 000's governance script reports counts and flags single admins and stale scripts", async ({
  request,
}) => {
  const lead = await createAccount(request, "gov-lead");
  const dev = await createAccount(request, "gov-dev");
  const backup = await createAccount(request, "gov-backup");
  const single = uniqueWorkspace("gov-single");
  const team = uniqueWorkspace("gov-team");
  const empty = uniqueWorkspace("gov-empty");

  // The seed runs with a superadmin's own token, not the instance secret.
  const login = await request.post("/api/auth/login", { data: E2E_ADMIN });
  const session = await login.text();
  const tokenResponse = await request.post("/api/users/tokens/create", {
    headers: { Authorization: `Bearer ${session}` },
    data: { label: "governance cron" },
  });
  expect(tokenResponse.status()).toBe(201);
  const token = await tokenResponse.text();

  // As the seed's create_workspace provisions them: `username` names the team lead, who becomes
  // the workspace's one admin (the superadmin who creates it does not join).
  for (const id of [single, team]) {
    const created = await request.post("/api/workspaces/create", {
      headers: { Authorization: `Bearer ${token}` },
      data: { id, name: `Governance ${id}`, username: lead.email },
    });
    expect(created.status(), await created.text()).toBe(201);
  }
  expect(
    (
      await request.post("/api/workspaces/create", { headers: superadmin, data: { id: empty, name: empty } })
    ).status(),
  ).toBe(201);
  await addMember(request, single, dev.email, "developer");
  await addMember(request, team, dev.email, "operator");
  await addMember(request, team, backup.email, "admin");
  await deployScript(request, single, "f/etl/old_export");
  await deployScript(request, single, "f/etl/fresh_import");
  await deployScript(request, team, `u/${lead.username}/notes`, lead.headers);

  const db = await e2eDatabase();
  try {
    await db.query(
      `UPDATE script SET created_at = now() - interval '200 days' WHERE workspace_id = $1 AND path = 'f/etl/old_export'`,
      [single],
    );
  } finally {
    await db.end();
  }

  const { stdout } = await promisify(execFile)("/usr/bin/python3", [script], {
    env: { PATH: process.env.PATH, WINDMILL_URL: E2E_BASE_URL, WINDMILL_SUPERADMIN_TOKEN: token },
    timeout: 60_000,
  });
  const workspaces = await (await request.get("/api/workspaces/list", { headers: superadmin })).json();
  expect(stdout).toContain(`Total workspaces: ${workspaces.length}`);

  const singleSection = section(stdout, single);
  expect(singleSection).toContain("Users: 2 | Admins: 1 | Scripts: 2");
  expect(singleSection).toContain(`Single admin (${lead.email})`);
  expect(singleSection).toContain("1 scripts not modified in 180+ days");
  expect(singleSection).not.toContain("No admin");

  const teamSection = section(stdout, team);
  expect(teamSection).toContain("Users: 3 | Admins: 2 | Scripts: 1");
  expect(teamSection).not.toContain("⚠️");
  expect(teamSection).not.toContain("180+ days");

  const emptySection = section(stdout, empty);
  expect(emptySection).toContain("Users: 0 | Admins: 0 | Scripts: 0");
  expect(emptySection).toContain("WARNING: No admin user configured");

  // The same findings as JSON from Millrace's own governance API.
  const report = await (
    await request.get("/api/governance/report", { headers: { Authorization: `Bearer ${token}` } })
  ).json();
  const byId = Object.fromEntries(report.workspaces.map((w: { id: string }) => [w.id, w]));
  expect(byId[single]).toMatchObject({
    members: 2,
    admin_count: 1,
    scripts: 2,
    warnings: ["single_admin"],
    stale_scripts: [{ path: "f/etl/old_export" }],
    tags: ["bash"],
  });
  expect(byId[team]).toMatchObject({
    members: 3,
    admin_count: 2,
    scripts: 1,
    warnings: [],
    stale_scripts: [],
  });
  expect(byId[empty]).toMatchObject({ members: 0, admin_count: 0, warnings: ["no_admin"] });
  expect(report.tags.bash).toEqual(expect.arrayContaining([single, team]));

  // A workspace admin gets the same view of their own workspace, and nothing of the instance.
  const own = await request.get(`/api/w/${single}/governance/report`, { headers: lead.headers });
  expect(own.status()).toBe(200);
  expect((await own.json()).workspaces.map((w: { id: string }) => w.id)).toEqual([single]);
  expect((await request.get("/api/governance/report", { headers: lead.headers })).status()).toBe(403);
  expect((await request.get(`/api/w/${single}/governance/report`, { headers: dev.headers })).status()).toBe(
    403,
  );
});
