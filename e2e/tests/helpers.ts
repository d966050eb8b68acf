import { expect, type APIRequestContext, type Page } from "@playwright/test";
import { E2E_ADMIN, E2E_SUPERADMIN_SECRET } from "../instance.ts";

export const superadmin = { Authorization: `Bearer ${E2E_SUPERADMIN_SECRET}` };

let counter = 0;
/** A workspace id unique to this run, so test files never see each other's data. */
export function uniqueWorkspace(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${++counter}`;
}

export async function createWorkspace(
  request: APIRequestContext,
  id: string,
  headers = superadmin,
): Promise<void> {
  const response = await request.post("/api/workspaces/create", { headers, data: { id, name: id } });
  if (response.status() !== 201)
    throw new Error(`create workspace ${id}: ${response.status()} ${await response.text()}`);
}

/** Polls a job until it is a CompletedJob, then returns it (Windmill's Job shape). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function completedJob(request: APIRequestContext, workspace: string, id: string): Promise<any> {
  const get = async () =>
    (await request.get(`/api/w/${workspace}/jobs_u/get/${id}`, { headers: superadmin })).json();
  await expect.poll(async () => (await get()).type).toBe("CompletedJob");
  return get();
}

/** Signs in through the login page, at the 1440×900 a new user's screen had. */
export async function signIn(
  page: Page,
  email = E2E_ADMIN.email,
  password = E2E_ADMIN.password,
): Promise<void> {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/workspaces/);
}

/** Deploys a new version of the script at `path` (on top of the latest one), as the superadmin. */
export async function deployVersion(
  request: APIRequestContext,
  workspace: string,
  path: string,
  language: string,
  content: string,
  summary = "",
): Promise<string> {
  const current = await request.get(`/api/w/${workspace}/scripts/get/p/${path}`, { headers: superadmin });
  const parent = current.ok() ? ((await current.json()) as { hash: string }).hash : undefined;
  const response = await request.post(`/api/w/${workspace}/scripts/create`, {
    headers: superadmin,
    data: { path, language, content, summary, parent_hash: parent },
  });
  expect(response.status(), await response.text()).toBe(201);
  return response.text();
}
