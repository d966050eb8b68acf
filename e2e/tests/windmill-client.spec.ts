import { expect, test } from "@playwright/test";
import * as wmill from "windmill-client";
import { E2E_SUPERADMIN_SECRET } from "../instance.ts";
import { createWorkspace, uniqueWorkspace } from "./helpers.ts";

// Windmill's own TypeScript client (Apache-2.0), pointed at Millrace: request and response shapes
// must be the ones it expects.
test("windmill-client creates, lists and runs scripts against Millrace", async ({ request, baseURL }) => {
  const workspace = uniqueWorkspace("wmill");
  await createWorkspace(request, workspace);
  wmill.setClient(E2E_SUPERADMIN_SECRET, baseURL);

  const hash = await wmill.ScriptService.createScript({
    workspace,
    requestBody: {
      path: "f/compat/shout",
      summary: "uppercase",
      description: "",
      content: 'text="$1"\necho "${text^^}"\n',
      language: "bash",
    },
  });
  expect(hash).toMatch(/^[0-9a-f]{16}$/);

  const scripts = await wmill.ScriptService.listScripts({ workspace });
  expect(scripts.map((s) => s.path)).toEqual(["f/compat/shout"]);
  const script = await wmill.ScriptService.getScriptByPath({ workspace, path: "f/compat/shout" });
  expect(script).toMatchObject({ hash, language: "bash", summary: "uppercase" });

  const result = await wmill.JobService.runWaitResultScriptByPath({
    workspace,
    path: "f/compat/shout",
    requestBody: { text: "quiet" },
  });
  expect(result).toBe("QUIET");

  const id = await wmill.JobService.runScriptByPath({
    workspace,
    path: "f/compat/shout",
    requestBody: { text: "later" },
  });
  await expect.poll(async () => (await wmill.JobService.getJob({ workspace, id })).type).toBe("CompletedJob");
  const job = await wmill.JobService.getJob({ workspace, id });
  expect(job.type === "CompletedJob" && job.success).toBe(true);
  expect(await wmill.JobService.getCompletedJobResult({ workspace, id })).toBe("LATER");
});
