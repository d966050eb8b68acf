// Issue 19 (hardening), over HTTP against a running instance: what a database dump, a reserved
// workspace id, a job's WM_TOKEN, the launcher's log and the compose files can no longer give away.
import { spawnSync } from "node:child_process";
import { hkdfSync } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { addMember, createAccount, e2eDatabase } from "../fixtures/people.ts";
import { E2E_ADMIN } from "../instance.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
// next-auth's cookie on a plain-http instance (a secure one prefixes it with __Secure-).
const SESSION_COOKIE = "next-auth.session-token";

// next-auth's own encoder (the web app's dependency), loaded by name so that its types (which
// bring Next's global ones) stay out of the e2e project.
const NEXT_AUTH_JWT = "next-auth/jwt";
type Encode = (params: { token: Record<string, unknown>; secret: string }) => Promise<string>;

/** A session cookie made as next-auth makes one, for `user`, signed with `secret`. */
async function forgedSession(user: { id: string; email: string }, secret: string): Promise<string> {
  const { encode } = (await import(NEXT_AUTH_JWT)) as { encode: Encode };
  const jwt = await encode({ token: { sub: user.id, email: user.email, name: "Admin" }, secret });
  return `${SESSION_COOKIE}=${jwt}`;
}

/** Whether a cookie opens a session: next-auth's own session endpoint and a REST call. */
async function sessionWorks(request: APIRequestContext, cookie: string): Promise<boolean> {
  const session = await (await request.get("/api/auth/session", { headers: { cookie } })).json();
  const list = await request.get("/api/workspaces/list", { headers: { cookie } });
  expect(!!session?.user, "next-auth and the REST API agree on the cookie").toBe(list.status() === 200);
  if (list.status() !== 200) expect(list.status()).toBe(401);
  return list.status() === 200;
}

test.describe("a database dump grants nothing", () => {
  test("a session cookie signed with any value stored in the database is refused", async ({ request }) => {
    // The server sets its session signing up on the first session it is asked about.
    expect((await request.get("/api/auth/session")).status()).toBe(200);
    const db = await e2eDatabase();
    try {
      const { rows: admins } = await db.query<{ id: string; email: string }>(
        `SELECT id, email FROM "user" WHERE email = $1`,
        [E2E_ADMIN.email],
      );
      const admin = admins[0]!;
      const { rows: settings } = await db.query<{ key: string; value: unknown }>(
        "SELECT key, value FROM instance_setting",
      );
      const stored = settings.filter((row) => typeof row.value === "string");
      // Whatever signs sessions keeps something in the database (the old plain key, or the random
      // half of the derived one): each of these, used as the key, must fail.
      expect(stored.map((row) => row.key).filter((key) => key.startsWith("session"))).not.toEqual([]);
      for (const row of stored) {
        expect(await sessionWorks(request, await forgedSession(admin, row.value as string)), row.key).toBe(
          false,
        );
      }
      // The same cookie signed with the real key opens a session: the forgeries above were made
      // exactly as next-auth makes cookies, and only the key was wrong.
      const instanceKey = fs.readFileSync(path.join(root, ".data/secret-key"), "utf8").trim();
      const salt = settings.find((row) => row.key === "session_secret_salt")!.value as string;
      const aesKey = Buffer.from(hkdfSync("sha256", instanceKey, "millrace", "millrace instance key v1", 32));
      const real = Buffer.from(hkdfSync("sha256", aesKey, salt, "millrace session signing v1", 32)).toString(
        "base64url",
      );
      expect(await sessionWorks(request, await forgedSession(admin, real))).toBe(true);
    } finally {
      await db.end();
    }
  });

  test("login tokens and API tokens are stored hashed: the stored value is no bearer token", async ({
    request,
  }) => {
    const account = await createAccount(request, "dump");
    const db = await e2eDatabase();
    try {
      const { rows } = await db.query<{ token_hash: string }>(
        `SELECT t.token_hash FROM api_token t JOIN "user" u ON u.id = t.user_id WHERE u.email = $1`,
        [account.email],
      );
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row.token_hash).not.toContain(account.token);
        const call = await request.get("/api/users/whoami", {
          headers: { Authorization: `Bearer ${row.token_hash}` },
        });
        expect(call.status()).toBe(401);
      }
    } finally {
      await db.end();
    }
  });
});

test.describe("reserved workspaces", () => {
  test("`admins` and the other reserved ids cannot be created, over REST or tRPC", async ({ request }) => {
    for (const id of ["admins", "system", "global"]) {
      const rest = await request.post("/api/workspaces/create", {
        headers: superadmin,
        data: { id, name: id },
      });
      expect(rest.status()).toBe(400);
      expect(await rest.text()).toMatch(new RegExp(`^id: "${id}" is reserved`));
      const trpc = await request.post("/api/trpc/workspace.create", {
        headers: superadmin,
        data: { id, name: id },
      });
      expect(trpc.status()).toBe(400);
      expect(await trpc.text()).toContain("reserved");
    }
  });

  test("an existing `admins` workspace is readable by superadmins only, even to its members", async ({
    request,
  }) => {
    const intruder = await createAccount(request, "admins-member");
    const db = await e2eDatabase();
    try {
      await db.query(
        `INSERT INTO workspace (id, name) VALUES ('admins', 'Admins') ON CONFLICT (id) DO NOTHING`,
      );
      await db.query(
        `INSERT INTO workspace_member (workspace_id, user_id, role)
         SELECT 'admins', id, 'admin' FROM "user" WHERE email = $1`,
        [intruder.email],
      );
    } finally {
      await db.end();
    }
    for (const url of [
      "/api/w/admins/jobs/list",
      "/api/w/admins/users/whoami",
      "/api/w/admins/scripts/list",
    ]) {
      expect((await request.get(url, { headers: intruder.headers })).status(), url).toBe(404);
      expect((await request.get(url, { headers: superadmin })).status(), url).toBe(200);
    }
    const listed = await (await request.get("/api/workspaces/list", { headers: intruder.headers })).json();
    expect(listed.map((w: { id: string }) => w.id)).not.toContain("admins");
  });
});

// A bun script that reports what its WM_TOKEN may do, as a developer's malicious redeploy would try.
const PROBE = `export async function main(ws: string, secret: string, dev: string) {
  const headers = { Authorization: \`Bearer \${process.env.WM_TOKEN}\`, "content-type": "application/json" };
  const call = async (method: string, url: string, body?: unknown) => {
    const response = await fetch(process.env.BASE_INTERNAL_URL + url, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return response.status;
  };
  return {
    secret: await call("GET", \`/api/w/\${ws}/variables/get_value/\${secret}\`),
    promote: await call("POST", \`/api/w/\${ws}/users/update/\${dev}\`, { is_admin: true }),
    add: await call("POST", \`/api/w/\${ws}/users/add\`, { email: "nobody-\${dev}@example.com", is_admin: true }),
    workspace: await call("POST", "/api/workspaces/create", { id: \`\${ws}-job\`, name: "escape" }),
    token: await call("POST", "/api/users/tokens/create", { label: "escape" }),
  };
}
`;

test.describe("least privilege for code that others run", () => {
  test("a developer's redeploy of a script an admin's webhook runs gets the developer's rights only", async ({
    request,
  }) => {
    const ws = uniqueWorkspace("least");
    await createWorkspace(request, ws);
    const admin = await createAccount(request, "lp-admin");
    const dev = await createAccount(request, "lp-dev");
    await addMember(request, ws, admin.email, "admin");
    await addMember(request, ws, dev.email, "developer");
    const asAdmin = { headers: admin.headers };
    const ok = async (response: Awaited<ReturnType<APIRequestContext["post"]>>) => {
      expect(response.status(), await response.text()).toBeLessThan(300);
      return response.text();
    };
    // The admin's secret; a folder the developer may write in.
    const secret = `u/${admin.username}/vault`;
    await ok(
      await request.post(`/api/w/${ws}/variables/create`, {
        ...asAdmin,
        data: { path: secret, value: "admin-only-value", is_secret: true, description: "" },
      }),
    );
    await ok(
      await request.post(`/api/w/${ws}/folders/create`, {
        ...asAdmin,
        data: { name: "ops", extra_perms: { [`u/${dev.username}`]: true } },
      }),
    );
    // The admin deploys f/ops/probe (harmless for now) and hands a webhook for it to another system.
    const first = await ok(
      await request.post(`/api/w/${ws}/scripts/create`, {
        ...asAdmin,
        data: {
          path: "f/ops/probe",
          language: "bun",
          content: "export function main() { return 1 }",
          summary: "",
        },
      }),
    );
    const hook = await ok(
      await request.post(`/api/w/${ws}/webhooks/tokens/create`, {
        ...asAdmin,
        data: { path: "f/ops/probe" },
      }),
    );
    // The developer redeploys it with code of his own.
    await ok(
      await request.post(`/api/w/${ws}/scripts/create`, {
        headers: dev.headers,
        data: { path: "f/ops/probe", language: "bun", content: PROBE, summary: "", parent_hash: first },
      }),
    );
    const args = { ws, secret, dev: dev.username };
    const run = await request.post(`/api/w/${ws}/jobs/run_wait_result/p/f/ops/probe?token=${hook}`, {
      data: args,
    });
    expect(run.status(), await run.text()).toBe(200);
    // It runs as the admin, within the developer's rights: no secret, no promotion, no escape.
    expect(await run.json()).toEqual({ secret: 404, promote: 403, add: 403, workspace: 403, token: 403 });

    // The same code deployed by the admin himself reads his secret (the token works), and still
    // manages no members, creates no workspace and mints no token: a WM_TOKEN never does.
    await ok(
      await request.post(`/api/w/${ws}/scripts/create`, {
        ...asAdmin,
        data: { path: `u/${admin.username}/probe`, language: "bun", content: PROBE, summary: "" },
      }),
    );
    const own = await request.post(`/api/w/${ws}/jobs/run_wait_result/p/u/${admin.username}/probe`, {
      ...asAdmin,
      data: args,
    });
    expect(await own.json()).toEqual({ secret: 200, promote: 403, add: 403, workspace: 403, token: 403 });
    const member = await (await request.get(`/api/w/${ws}/users/get/${dev.username}`, asAdmin)).json();
    expect(member.is_admin).toBe(false);
  });
});

test.describe("operations", () => {
  test("the launcher never prints a superadmin password that came from the environment", () => {
    const log = fs.readFileSync(path.join(root, ".data/e2e-launcher.log"), "utf8");
    expect(log).toContain("Millrace is running at");
    expect(log).toContain(`sign in as ${E2E_ADMIN.email}`);
    expect(log).not.toContain(E2E_ADMIN.password);
  });

  test("the compose files give every server and worker the same MILLRACE_SECRET_KEY", () => {
    const compose = ["docker compose", "docker-compose"].find(
      (command) => spawnSync("sh", ["-c", `${command} version`], { stdio: "ignore" }).status === 0,
    );
    // .ci/run installs docker-compose; a machine without either cannot check this.
    test.skip(!compose, "neither `docker compose` nor `docker-compose` is installed");
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SUPERADMIN_EMAIL: "ops@example.com",
      SUPERADMIN_PASSWORD: "change-me-please",
    };
    const key = "compose-test-key-0123456789abcdefghijkl";
    for (const file of ["docker/docker-compose.yml", "docker/docker-compose.ha.yml"]) {
      const config = (extra: Record<string, string>) =>
        spawnSync("sh", ["-c", `${compose} -f ${file} config`], {
          cwd: root,
          env: { ...env, ...extra },
          encoding: "utf8",
        });
      const missing = config({});
      expect(missing.status, file).not.toBe(0);
      expect(missing.stderr, file).toContain("MILLRACE_SECRET_KEY");
      const resolved = config({ MILLRACE_SECRET_KEY: key });
      expect(resolved.status, `${file}: ${resolved.stderr}`).toBe(0);
      // Every service that runs Millrace (MODE server or worker) gets the key.
      const services = resolved.stdout
        .split(/\n {2}(?=\S+:\n)/)
        .filter((part) => /MODE: (server|worker)/.test(part));
      expect(services.length, file).toBeGreaterThanOrEqual(2);
      for (const service of services) expect(service, file).toContain(`MILLRACE_SECRET_KEY: ${key}`);
    }
  });
});
