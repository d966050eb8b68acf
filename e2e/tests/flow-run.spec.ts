import { expect, test, type Page } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

// Issue 22, item 6: the run page of a flow shows the flow's graph with each step coloured by its
// status, updated live; a click on a step shows its arguments, logs and result; a loop's runs are
// browsable one by one.

function bash(id: string, content: string, inputs: Record<string, string> = {}, extra: object = {}) {
  return {
    id,
    ...extra,
    value: {
      type: "rawscript",
      language: "bash",
      content,
      input_transforms: Object.fromEntries(
        Object.entries(inputs).map(([name, expr]) => [name, { type: "javascript", expr }]),
      ),
    },
  };
}

async function signIn(page: Page): Promise<void> {
  await page.goto("/login");
  await page.getByLabel("Email").fill(E2E_ADMIN.email);
  await page.getByLabel("Password").fill(E2E_ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/workspaces/);
}

test("a flow run: steps coloured by status live, skipped branches, a failed step, loop runs browsable", async ({
  page,
  request,
}) => {
  test.setTimeout(120_000);
  const workspace = uniqueWorkspace("flowrun");
  await createWorkspace(request, workspace);
  const path = "u/e2e_admin/run_view";
  const created = await request.post(`/api/w/${workspace}/flows/create`, {
    headers: superadmin,
    data: {
      path,
      summary: "run view",
      value: {
        modules: [
          bash("slow", 'sleep 3\necho "slow-done"'),
          {
            id: "pick",
            value: {
              type: "branchone",
              branches: [{ expr: "false", modules: [bash("never", 'echo "never"')] }],
              default: [bash("fallback", 'echo "fallback"')],
            },
          },
          {
            id: "loop",
            value: {
              type: "forloopflow",
              iterator: { type: "javascript", expr: '["x", "y", "z"]' },
              skip_failures: false,
              modules: [bash("each", 'v="$1"\necho "item-$v"', { v: "flow_input.iter.value" })],
            },
          },
          bash("boom", 'echo "about to fail"\nexit 3', {}, { continue_on_error: true }),
          bash("after", 'echo "after-boom"'),
        ],
      },
    },
  });
  expect(created.status(), await created.text()).toBeLessThan(300);
  await signIn(page);
  const started = await request.post(`/api/w/${workspace}/jobs/run/f/${path}`, {
    headers: superadmin,
    data: {},
  });
  const id = await started.text();
  await page.goto(`/w/${workspace}/runs/${id}`);

  const view = page.getByTestId("flow-run-view");
  const node = (step: string) => view.getByTestId("flow-node").and(page.locator(`[data-step="${step}"]`));
  // Live: the slow first step is seen running (or queued), the last step waiting, then both done.
  await expect(node("slow")).toHaveAttribute("data-status", /running|queued/);
  await expect(node("after")).toHaveAttribute("data-status", "waiting");
  await expect(node("after")).toHaveAttribute("data-status", "success", { timeout: 30_000 });
  await expect(page.getByTestId("job-status").first()).toHaveText("success");
  await expect(node("slow")).toHaveAttribute("data-status", "success");
  await expect(node("never")).toHaveAttribute("data-status", "skipped");
  await expect(node("fallback")).toHaveAttribute("data-status", "success");
  await expect(node("pick")).toHaveAttribute("data-status", "success");
  await expect(node("each")).toHaveAttribute("data-status", "success");
  await expect(node("loop")).toHaveAttribute("data-status", "success");
  await expect(node("boom")).toHaveAttribute("data-status", "failure");

  // A step's arguments, logs and result.
  await node("boom").getByRole("button").click();
  const detail = view.getByTestId("flow-step-detail");
  await expect(detail).toContainText("about to fail");
  await node("slow").getByRole("button").click();
  await expect(detail.getByTestId("job-status")).toHaveText("success");
  await expect(detail).toContainText("slow-done");

  // The loop body's three runs, one by one.
  await node("each").getByRole("button").click();
  const runs = detail.getByRole("group", { name: "Runs of this step" });
  await expect(runs.getByRole("combobox")).toContainText("3 of 3");
  await runs.getByRole("combobox").selectOption({ index: 0 });
  await expect(detail.getByTestId("flow-step-job")).toContainText("item-x");
  await runs.getByRole("button", { name: "Next run of this step" }).click();
  await expect(detail.getByTestId("flow-step-job")).toContainText("item-y");
  await runs.getByRole("button", { name: "Next run of this step" }).click();
  await expect(detail.getByTestId("flow-step-job")).toContainText("item-z");

  // The run links back to its flow's page.
  await expect(page.getByRole("link", { name: path, exact: true }).first()).toHaveAttribute(
    "href",
    `/w/${workspace}/flows/get/${path}`,
  );
});

test("a step waiting for approval: its state on the run page, Approve moves the flow on, Deny ends it", async ({
  page,
  request,
}) => {
  test.setTimeout(120_000);
  const workspace = uniqueWorkspace("flowappr");
  await createWorkspace(request, workspace);
  const path = "u/e2e_admin/approval";
  const created = await request.post(`/api/w/${workspace}/flows/create`, {
    headers: superadmin,
    data: {
      path,
      summary: "approval",
      value: {
        modules: [
          { id: "gate", value: { type: "identity" }, suspend: { required_events: 1, timeout: 600 } },
          bash("after", 'echo "approved-and-done"'),
        ],
      },
    },
  });
  expect(created.status(), await created.text()).toBeLessThan(300);
  await signIn(page);
  const run = async () =>
    (await request.post(`/api/w/${workspace}/jobs/run/f/${path}`, { headers: superadmin, data: {} })).text();

  const approved = await run();
  await page.goto(`/w/${workspace}/runs/${approved}`);
  const view = page.getByTestId("flow-run-view");
  const node = (step: string) => view.getByTestId("flow-node").and(page.locator(`[data-step="${step}"]`));
  const approval = view.getByTestId("flow-approval");
  await expect(approval).toContainText("Step gate waits for approval");
  await expect(approval.getByTestId("flow-approval-count")).toContainText("0 of 1 approval received");
  await expect(node("gate")).toHaveAttribute("data-status", "suspended");
  await expect(node("after")).toHaveAttribute("data-status", "waiting");
  await approval.getByRole("button", { name: "Approve" }).click();
  await expect(node("after")).toHaveAttribute("data-status", "success", { timeout: 30_000 });
  await expect(page.getByTestId("job-status").first()).toHaveText("success");
  await expect(view.getByTestId("flow-approval")).toHaveCount(0);

  const denied = await run();
  await page.goto(`/w/${workspace}/runs/${denied}`);
  await view.getByTestId("flow-approval").getByRole("button", { name: "Deny" }).click();
  await expect(page.getByTestId("job-status").first()).toHaveText("canceled", { timeout: 30_000 });
  await expect(node("after")).not.toHaveAttribute("data-status", "success");
});
