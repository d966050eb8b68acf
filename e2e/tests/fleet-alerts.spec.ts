// Issue 36 item 3 in the browser: a superadmin sets where alerts go on the Alerts page (a bad
// value is refused naming its field, nothing saved), and an open alert shows as a banner on the
// Workers page, then goes once it recovers.
import { expect, test } from "@playwright/test";
import { createWorkspace, signIn, superadmin, uniqueWorkspace } from "./helpers.ts";

const SETTINGS = ["alert_webhook_url", "alert_script", "alert_queue_wait_secs", "alert_worker_offline_secs"];

test("the Alerts page saves where alerts go, and the Workers page shows an open alert", async ({
  page,
  request,
}) => {
  const kept: Record<string, unknown> = {};
  for (const key of SETTINGS) {
    kept[key] = await (await request.get(`/api/settings/global/${key}`, { headers: superadmin })).json();
  }
  try {
    const workspace = uniqueWorkspace("alerts");
    await createWorkspace(request, workspace);
    await signIn(page);
    await page.goto("/admin/alerts");
    const form = page.getByRole("form", { name: "Alert settings" });
    await form.getByLabel("Webhook URL").fill("ftp://example.com/hook");
    await form.getByLabel("Worker offline after (seconds)").fill("2");
    await form.getByRole("button", { name: "Save" }).click();
    await expect(form.locator(".field-error")).toContainText("http(s) URL");
    const unsaved = await request.get("/api/settings/global/alert_worker_offline_secs", {
      headers: superadmin,
    });
    expect(await unsaved.json()).toEqual(kept.alert_worker_offline_secs ?? null);

    await form.getByLabel("Webhook URL").fill("");
    await form.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText("Alert settings saved")).toBeVisible();
    const saved = await request.get("/api/settings/global/alert_worker_offline_secs", {
      headers: superadmin,
    });
    expect(await saved.json()).toBe(2);

    // A job on a tag no worker serves: after 2 s the tag is unserved.
    const tag = `unserved-${Date.now().toString(36)}`;
    const run = await request.post(`/api/w/${workspace}/jobs/run/preview`, {
      headers: superadmin,
      data: { language: "bash", content: "echo never", args: {}, tag },
    });
    expect(run.status(), await run.text()).toBe(201);
    const id = await run.text();
    await page.goto(`/w/${workspace}/workers`);
    const banner = page.getByTestId("alerts-banner");
    await expect(banner).toContainText(`on tag ${tag} wait and no live worker serves it`, {
      timeout: 30_000,
    });

    // Canceled, the queue empties and the alert recovers.
    const cancel = await request.post(`/api/w/${workspace}/jobs_u/queue/cancel/${id}`, {
      headers: superadmin,
      data: { reason: "e2e" },
    });
    expect(cancel.status(), await cancel.text()).toBeLessThan(300);
    await expect(banner.getByText(tag)).toHaveCount(0, { timeout: 30_000 });
    await page.goto("/admin/alerts");
    await expect(page.getByText(`tag ${tag} is served again, or its queue emptied`)).toBeVisible();
  } finally {
    for (const key of SETTINGS) {
      await request.post(`/api/settings/global/${key}`, {
        headers: superadmin,
        data: { value: kept[key] ?? null },
      });
    }
  }
});
