import { expect, type APIRequestContext } from "@playwright/test";
import { E2E_SUPERADMIN_SECRET } from "../instance.ts";

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
