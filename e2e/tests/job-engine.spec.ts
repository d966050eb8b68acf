import { expect, test } from "@playwright/test";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

test.describe("job engine over REST", () => {
  const workspace = uniqueWorkspace("engine");
  const other = uniqueWorkspace("engine-other");

  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
    await createWorkspace(request, other);
    const created = await request.post(`/api/w/${workspace}/scripts/create`, {
      headers: superadmin,
      data: { path: "u/admin/echo", language: "bash", summary: "", content: 'x="$1"\necho "$x"' },
    });
    expect(created.status()).toBe(201);
  });

  test("bad limits and run options are refused with a 4xx naming the field", async ({ request }) => {
    const script = (extra: Record<string, unknown>) =>
      request.post(`/api/w/${workspace}/scripts/create`, {
        headers: superadmin,
        data: { path: `u/admin/bad_${Date.now()}`, language: "bash", summary: "", content: "echo", ...extra },
      });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ tag: "gpu(ws1" }, /^tag: /],
      [{ tag: "has space" }, /^tag: /],
      [{ timeout: -5 }, /^timeout: /],
      [{ timeout: 10_000_000 }, /^timeout: at most \d+ seconds/],
      [{ priority: 0 }, /^priority: /],
      [{ priority: 101 }, /^priority: /],
      [{ retry: { constant: { attempts: -1, seconds: 1 } } }, /^retry\.constant\.attempts: /],
      [{ concurrent_limit: 0 }, /^concurrent_limit: /],
    ];
    for (const [extra, message] of cases) {
      const response = await script(extra);
      expect(response.status(), JSON.stringify(extra)).toBe(400);
      expect(await response.text()).toMatch(message);
    }
    const run = (query: string) =>
      request.post(`/api/w/${workspace}/jobs/run/p/u/admin/echo?${query}`, {
        headers: superadmin,
        data: { x: "1" },
      });
    for (const [query, message] of [
      ["priority=0", /^priority: /],
      ["priority=500", /^priority: /],
      ["priority=abc", /^priority: /],
      ["scheduled_for=not-a-date", /^scheduled_for: not a valid date-time/],
      ["scheduled_in_secs=-3", /^scheduled_in_secs: /],
    ] as const) {
      const response = await run(query);
      expect(response.status(), query).toBe(400);
      expect(await response.text()).toMatch(message);
    }
  });

  test("a restricted tag is refused for another workspace, at deploy and at run", async ({ request }) => {
    const set = await request.post("/api/settings/global/custom_tags", {
      headers: superadmin,
      data: { value: [`gpu_e2e(${workspace})`] },
    });
    expect(set.status(), await set.text()).toBeLessThan(300);
    const allowed = await request.post(`/api/w/${workspace}/scripts/create`, {
      headers: superadmin,
      data: { path: "u/admin/on_gpu", language: "bash", summary: "", content: "echo gpu", tag: "gpu_e2e" },
    });
    expect(allowed.status()).toBe(201);
    const refused = await request.post(`/api/w/${other}/scripts/create`, {
      headers: superadmin,
      data: { path: "u/admin/on_gpu", language: "bash", summary: "", content: "echo gpu", tag: "gpu_e2e" },
    });
    expect(refused.status()).toBe(400);
    expect(await refused.text()).toContain("gpu_e2e");
    // A dynamic tag resolving to the restricted one is refused when the job is enqueued.
    const dynamic = await request.post(`/api/w/${other}/scripts/create`, {
      headers: superadmin,
      data: {
        path: "u/admin/dyn",
        language: "bash",
        summary: "",
        content: 't="$1"\necho "$t"',
        tag: "$args[t]",
      },
    });
    expect(dynamic.status()).toBe(201);
    const enqueue = await request.post(`/api/w/${other}/jobs/run/p/u/admin/dyn`, {
      headers: superadmin,
      data: { t: "gpu_e2e" },
    });
    expect(enqueue.status()).toBe(400);
    expect(await enqueue.text()).toContain("gpu_e2e");
    await request.post("/api/settings/global/custom_tags", { headers: superadmin, data: { value: [] } });
  });

  test("cancel a running job over REST: killed within seconds, canceled with who and why", async ({
    request,
  }) => {
    await request.post(`/api/w/${workspace}/scripts/create`, {
      headers: superadmin,
      data: { path: "u/admin/sleepy", language: "bash", summary: "", content: "echo started\nsleep 60" },
    });
    const id = await (
      await request.post(`/api/w/${workspace}/jobs/run/p/u/admin/sleepy`, { headers: superadmin, data: {} })
    ).text();
    await expect
      .poll(
        async () =>
          (await (await request.get(`/api/w/${workspace}/jobs_u/get/${id}`, { headers: superadmin })).json())
            .running,
      )
      .toBe(true);
    const cancel = await request.post(`/api/w/${workspace}/jobs_u/queue/cancel/${id}`, {
      headers: superadmin,
      data: { reason: "e2e says stop" },
    });
    expect(cancel.status()).toBe(200);
    await expect
      .poll(
        async () =>
          (await (await request.get(`/api/w/${workspace}/jobs_u/get/${id}`, { headers: superadmin })).json())
            .type,
        {
          timeout: 5000,
        },
      )
      .toBe("CompletedJob");
    const job = await (
      await request.get(`/api/w/${workspace}/jobs_u/get/${id}`, { headers: superadmin })
    ).json();
    expect(job).toMatchObject({
      canceled: true,
      canceled_by: "superadmin_secret",
      canceled_reason: "e2e says stop",
    });
    const again = await request.post(`/api/w/${workspace}/jobs_u/queue/cancel/${id}`, {
      headers: superadmin,
      data: {},
    });
    expect(again.status()).toBe(409);
  });
});
