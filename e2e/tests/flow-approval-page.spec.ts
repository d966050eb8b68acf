import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

// Issue 22, item 3: the approval page a signed resume link leads to (wmill.getResumeUrls()'s
// approvalPage) shows the flow's context and the step's form to someone who is not signed in;
// their answer reaches the next step; a link whose signature was altered is refused.

test("the approval page of a signed link: the flow's context, the form, Approve moves the flow on", async ({
  browser,
  request,
}) => {
  test.setTimeout(120_000);
  const workspace = uniqueWorkspace("approvepage");
  await createWorkspace(request, workspace);
  const path = "u/e2e_admin/needs_approval";
  const created = await request.post(`/api/w/${workspace}/flows/create`, {
    headers: superadmin,
    data: {
      path,
      summary: "needs an approval",
      schema: {
        type: "object",
        properties: { release: { type: "string" } },
        required: [],
        order: ["release"],
      },
      value: {
        modules: [
          {
            id: "gate",
            summary: "Release manager",
            value: { type: "identity" },
            suspend: {
              required_events: 1,
              timeout: 600,
              resume_form: {
                schema: { type: "object", properties: { comment: { type: "string" } }, order: ["comment"] },
              },
            },
          },
          {
            id: "after",
            value: {
              type: "rawscript",
              language: "bash",
              content: 'echo "comment=$1"',
              input_transforms: { comment: { type: "javascript", expr: "resume.comment" } },
            },
          },
        ],
      },
    },
  });
  expect(created.status(), await created.text()).toBeLessThan(300);
  const flowId = await (
    await request.post(`/api/w/${workspace}/jobs/run/f/${path}`, {
      headers: superadmin,
      data: { release: "v2.3" },
    })
  ).text();

  // The job the suspended step's links name (for an identity step, the flow job itself).
  let stepJob = "";
  await expect
    .poll(async () => {
      const job = await (
        await request.get(`/api/w/${workspace}/jobs_u/get/${flowId}`, { headers: superadmin })
      ).json();
      stepJob = job.flow_status?._engine?.suspended?.job ?? "";
      return stepJob;
    })
    .not.toBe("");
  const urls = (await (
    await request.get(`/api/w/${workspace}/jobs/resume_urls/${stepJob}/7?approver=ops`, {
      headers: superadmin,
    })
  ).json()) as { approvalPage: string };
  const pagePath = new URL(urls.approvalPage).pathname + new URL(urls.approvalPage).search;
  expect(pagePath).toMatch(new RegExp(`^/approve/${workspace}/${stepJob}/7/`));

  // Nobody signed in: the link is the credential.
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(pagePath.replace(/\/7\/([^/?]+)/, (_m, sig: string) => `/7/${sig.slice(0, -2)}xx`));
  await expect(page.getByText("This approval link cannot be used")).toContainText("signature");

  await page.goto(pagePath);
  await expect(page.getByRole("heading", { name: "Approval", exact: true })).toBeVisible();
  await expect(page.getByText(`Flow ${path}, started by`)).toBeVisible();
  await expect(page.getByText("Step Release manager waits for 1 approval; 0 received")).toBeVisible();
  await expect(page.getByText("v2.3")).toBeVisible();
  await expect(page.getByRole("heading", { name: "Your decision (as ops)" })).toBeVisible();
  const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  expect(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);
  await page.getByLabel("comment").fill("ship it");
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByTestId("approval-done")).toHaveText("Approved. Thank you.");

  await expect
    .poll(async () => {
      const job = await (
        await request.get(`/api/w/${workspace}/jobs_u/get/${flowId}`, { headers: superadmin })
      ).json();
      return job.type === "CompletedJob" ? JSON.stringify(job.result) : "";
    })
    .toContain("comment=ship it");
  // The link was used: its page says the flow is over, and offers no decision.
  await page.reload();
  await expect(page.getByText("This flow is over.")).toBeVisible();
  await expect(page.getByRole("button", { name: "Approve" })).toHaveCount(0);
  await context.close();
});
