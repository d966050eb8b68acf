import { expect, test, type APIRequestContext } from "@playwright/test";
import { startTestS3 } from "@millrace/core/testing";
import { addMember, createAccount } from "../fixtures/people.ts";
import { signIn } from "../fixtures/site-pages.ts";
import { createWorkspace, uniqueWorkspace } from "./helpers.ts";

// The Object storage page against a real S3 server started by this test (s3rver on 127.0.0.1,
// which the built server reaches): an admin chooses a resource, saves, tests the connection
// (a working store and one that refuses the access key), makes it public and removes it; a
// developer sees the setting without a way to change it.

let s3: Awaited<ReturnType<typeof startTestS3>>;

test.beforeAll(async () => {
  s3 = await startTestS3("ui-files");
});

test.afterAll(async () => {
  await s3?.close();
});

async function createS3Resource(
  request: APIRequestContext,
  workspace: string,
  headers: Record<string, string>,
  path: string,
  accessKey: string,
): Promise<void> {
  const response = await request.post(`/api/w/${workspace}/resources/create`, {
    headers,
    data: {
      path,
      resource_type: "s3",
      value: {
        bucket: s3.bucket,
        region: "us-east-1",
        endPoint: s3.endpoint,
        useSSL: false,
        pathStyle: true,
        accessKey,
        secretKey: s3.secretKey,
      },
      description: "",
    },
  });
  expect(response.status(), await response.text()).toBeLessThan(300);
}

async function storedSetting(
  request: APIRequestContext,
  workspace: string,
  headers: Record<string, string>,
): Promise<unknown> {
  const response = await request.get(`/api/w/${workspace}/workspaces/get_settings`, { headers });
  expect(response.status(), await response.text()).toBe(200);
  return ((await response.json()) as { large_file_storage?: unknown }).large_file_storage;
}

test("an admin sets, tests, shares and removes the object storage; a developer only sees it", async ({
  page,
  browser,
  request,
}) => {
  test.setTimeout(120_000);
  const workspace = uniqueWorkspace("objstore-ui");
  await createWorkspace(request, workspace);
  const admin = await createAccount(request, "objstore-admin");
  const developer = await createAccount(request, "objstore-dev");
  await addMember(request, workspace, admin.email, "admin");
  await addMember(request, workspace, developer.email, "developer");
  const good = `u/${admin.username}/files`;
  const wrong = `u/${admin.username}/files_wrong_key`;
  await createS3Resource(request, workspace, admin.headers, good, s3.accessKey);
  await createS3Resource(request, workspace, admin.headers, wrong, "NOT-THE-KEY");

  await signIn(page, admin.email, admin.password);
  await page.goto(`/w/${workspace}`);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Object storage" }).click();
  await expect(page.getByRole("heading", { name: "Object storage", exact: true })).toBeVisible();
  await expect(page.getByText("wmill.write_s3_file")).toBeVisible();
  const form = page.getByRole("form", { name: "Object storage settings" });
  const resource = form.getByRole("combobox", { name: "S3 resource", exact: true });
  const testButton = form.getByRole("button", { name: "Test connection" });
  const result = form.getByTestId("test-result");
  await expect(testButton).toBeDisabled();

  // A working store: saved, then tested end to end.
  await resource.selectOption(good);
  await expect(testButton).toBeEnabled(); // the form's setting is tested, saved or not
  await form.getByRole("button", { name: "Save" }).click();
  await expect
    .poll(() => storedSetting(request, workspace, admin.headers))
    .toEqual({ type: "S3Storage", s3_resource_path: `$res:${good}` });
  await testButton.click();
  await expect(result).toContainText(`Connection works: a test object was written to ${s3.bucket}`);

  // A store that refuses the access key: its refusal, at the resource's field.
  await resource.selectOption(wrong);
  await form.getByRole("button", { name: "Save" }).click();
  await expect
    .poll(() => storedSetting(request, workspace, admin.headers))
    .toEqual({ type: "S3Storage", s3_resource_path: `$res:${wrong}` });
  await testButton.click();
  await expect(result).toContainText("InvalidAccessKeyId");
  await expect(result).toHaveAttribute("role", "alert");
  await expect(resource).toHaveAttribute("aria-invalid", "true");

  // Back to the working one, public, with a secondary storage; the secondary tested too.
  await resource.selectOption(good);
  await form.getByRole("switch", { name: /Public/ }).check();
  await form.getByRole("button", { name: "Add a secondary storage" }).click();
  await form.getByLabel("Name of secondary storage 1").fill("archive");
  await form.getByRole("combobox", { name: "Resource of secondary storage 1" }).selectOption(good);
  await form.getByRole("button", { name: "Save" }).click();
  await expect
    .poll(() => storedSetting(request, workspace, admin.headers))
    .toHaveProperty("secondary_storage");
  await form.getByTestId("secondary-storage").getByRole("button", { name: "Test", exact: true }).click();
  await expect(form.getByTestId("secondary-storage").getByTestId("test-result")).toContainText(
    "Connection works",
  );

  await page.reload();
  await expect(resource).toHaveValue(good);
  await expect(form.getByRole("switch", { name: /Public/ })).toBeChecked();
  await expect(form.getByLabel("Name of secondary storage 1")).toHaveValue("archive");
  expect(await storedSetting(request, workspace, admin.headers)).toEqual({
    type: "S3Storage",
    s3_resource_path: `$res:${good}`,
    public_resource: true,
    secondary_storage: { archive: { type: "S3Storage", s3_resource_path: `$res:${good}` } },
  });

  // A developer sees it, read-only.
  const devContext = await browser.newContext();
  const devPage = await devContext.newPage();
  await signIn(devPage, developer.email, developer.password);
  await devPage.goto(`/w/${workspace}/object-storage`);
  const storages = devPage.getByRole("table", { name: "Storages" });
  await expect(storages.getByRole("row", { name: /\(primary\)/ })).toContainText(good);
  await expect(storages.getByRole("row", { name: /\(primary\)/ })).toContainText("public");
  await expect(storages.getByRole("row", { name: /archive/ })).toContainText("private");
  await expect(devPage.getByRole("main").getByRole("button", { name: "Save" })).toHaveCount(0);
  await expect(devPage.getByRole("main").getByRole("combobox")).toHaveCount(0);
  await devContext.close();

  // Removed, after a confirmation.
  await form.getByRole("button", { name: "Remove storage" }).click();
  const dialog = page.getByTestId("confirm-dialog");
  await expect(dialog).toContainText(`Remove the object storage of ${workspace}?`);
  await dialog.getByRole("button", { name: "Remove storage" }).click();
  await expect(form.getByRole("button", { name: "Remove storage" })).toHaveCount(0);
  await expect(resource).toHaveValue("");
  await expect(testButton).toBeDisabled();
  expect(await storedSetting(request, workspace, admin.headers)).toBeUndefined();
});
