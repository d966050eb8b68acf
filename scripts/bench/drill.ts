// Issue 20's figures: a workspace of 1,000 scripts, 200 resources, 200 variables and 100
// schedules; `millrace sync pull` of it; deploy-to-commit latency of server-side git sync to a git
// remote over HTTP; and the RTO of `millrace restore --from-git` into a second, empty instance.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestGitRemote } from "@millrace/sync/testing/git-remote";
import { startBenchInstance, type BenchInstance } from "./instance.ts";
import { ms, summary, withCpuPerRequest } from "./stats.ts";

type Summary = ReturnType<typeof summary>;

export const DRILL_SIZE = { scripts: 1000, resources: 200, variables: 200, schedules: 100 };
const WS = "drillbench";

export interface DrillBench {
  fillSeconds: number;
  pullSeconds: number;
  pulledFiles: number;
  firstSyncSeconds: number;
  deployToCommit: Summary;
  deployToCommitCpu: number;
  /** The git CLI cloning, committing and pushing one file to the same remote, same run. */
  rawGitPush: Summary;
  restoreSeconds: number;
  restoreCpu: number;
  restoredCounts: Record<string, number>;
}

function cli(root: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, "apps/cli/src/main.ts"), ...args], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        HOME: os.tmpdir(),
        MILLRACE_CONFIG: path.join(os.tmpdir(), "mr-bench-cli.json"),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs `task` over `items` with `parallel` requests in flight. */
async function inParallel<T>(items: T[], parallel: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

export async function drillBench(root: string, instance: BenchInstance): Promise<DrillBench> {
  const headers = { Authorization: `Bearer ${instance.userToken}`, "content-type": "application/json" };
  const post = async (p: string, body: unknown) => {
    const response = await fetch(`${instance.baseUrl}/api${p}`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST ${p}: ${response.status} ${await response.text()}`);
    return response;
  };
  const get = async (p: string) => {
    const response = await fetch(`${instance.baseUrl}/api${p}`, { headers });
    if (!response.ok) throw new Error(`GET ${p}: ${response.status} ${await response.text()}`);
    return response.json();
  };

  let started = performance.now();
  await post("/workspaces/create", { id: WS, name: "Drill bench" });
  for (const folder of ["scripts", "data", "jobs"]) await post(`/w/${WS}/folders/create`, { name: folder });
  await post(`/w/${WS}/resources/type/create`, {
    name: "c_endpoint",
    schema: { type: "object", properties: { url: { type: "string" }, retries: { type: "integer" } } },
    description: "bench endpoint",
  });
  const numbers = (n: number) => Array.from({ length: n }, (_, i) => i);
  await inParallel(numbers(DRILL_SIZE.scripts), 8, async (i) => {
    await post(`/w/${WS}/scripts/create`, {
      path: `f/scripts/s${i}`,
      language: "bash",
      summary: `script ${i}`,
      content: `msg="$1"\necho "script ${i}: $msg"\n`,
    });
  });
  await inParallel(numbers(DRILL_SIZE.variables), 8, async (i) => {
    await post(`/w/${WS}/variables/create`, {
      path: `f/data/v${i}`,
      value: `value ${i}`,
      is_secret: i % 4 === 0,
      description: `variable ${i}`,
    });
  });
  await inParallel(numbers(DRILL_SIZE.resources), 8, async (i) => {
    await post(`/w/${WS}/resources/create`, {
      path: `f/data/r${i}`,
      resource_type: "c_endpoint",
      value: { url: `https://svc${i}.internal`, retries: i % 5 },
    });
  });
  await inParallel(numbers(DRILL_SIZE.schedules), 8, async (i) => {
    await post(`/w/${WS}/schedules/create`, {
      path: `f/jobs/j${i}`,
      schedule: `0 ${i % 60} 3 * * *`,
      script_path: `f/scripts/s${i}`,
      args: { msg: `nightly ${i}` },
      enabled: i % 2 === 0,
    });
  });
  const fillSeconds = (performance.now() - started) / 1000;

  const pullDir = fs.mkdtempSync(path.join(os.tmpdir(), "mr-bench-pull-"));
  started = performance.now();
  const pull = await cli(root, [
    "--url",
    instance.baseUrl,
    "--token",
    instance.userToken,
    "-w",
    WS,
    "--json",
    "sync",
    "pull",
    pullDir,
    "--yes",
  ]);
  const pullSeconds = (performance.now() - started) / 1000;
  if (pull.code !== 0) throw new Error(`millrace sync pull failed: ${pull.stderr}`);
  const pulledFiles = (JSON.parse(pull.stdout) as { written: number }).written;
  fs.rmSync(pullDir, { recursive: true, force: true });

  const remote = await startTestGitRemote({ username: "bench", password: "bench-token" });
  const secondary = { current: null as BenchInstance | null };
  try {
    started = performance.now();
    await post(`/w/${WS}/git_sync/settings`, {
      remote_url: remote.url,
      username: "bench",
      password: "bench-token",
    });
    for (;;) {
      const status = (await get(`/w/${WS}/git_sync/status`)) as {
        last_commit: string | null;
        pending_changes: number;
        last_error: string | null;
      };
      if (status.last_commit && status.pending_changes === 0 && status.last_commit === (await remote.head()))
        break;
      if (performance.now() - started > 300_000)
        throw new Error(`first sync did not finish: ${status.last_error}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const firstSyncSeconds = (performance.now() - started) / 1000;

    const rawSamples: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      await remote.commitAsOther({ files: { [`bench/raw-${i}.txt`]: `${i}\n` }, message: `raw push ${i}` });
      rawSamples.push(performance.now() - started);
    }
    const samples: number[] = [];
    let parent = ((await get(`/w/${WS}/scripts/get/p/f/scripts/s0`)) as { hash: string }).hash;
    const { cpuPerRequest: deployToCommitCpu } = await withCpuPerRequest(20, async () => {
      for (let i = 0; i < 20; i++) {
        const head = await remote.head();
        const deployedAt = performance.now();
        const created = await post(`/w/${WS}/scripts/create`, {
          path: "f/scripts/s0",
          language: "bash",
          summary: "script 0",
          content: `msg="$1"\necho "edit ${i}: $msg"\n`,
          parent_hash: parent,
        });
        parent = (await created.text()).replace(/"/g, "");
        while ((await remote.head()) === head) {
          if (performance.now() - deployedAt > 60_000)
            throw new Error("a deploy did not reach the remote in 60 s");
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        samples.push(performance.now() - deployedAt);
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    });

    // The RTO: a second instance on an empty database, restored from the remote by the CLI.
    const fresh = await startBenchInstance(root, {
      numWorkers: 1,
      port: 8141,
      database: "millrace_bench_restore",
      adminUrl: instance.adminUrl,
    });
    secondary.current = fresh;
    started = performance.now();
    const { result: restore, cpuPerRequest: restoreCpu } = await withCpuPerRequest(1, () =>
      cli(root, [
        "--url",
        fresh.baseUrl,
        "--token",
        fresh.userToken,
        "--json",
        "restore",
        "--from-git",
        remote.url,
        "--git-username",
        "bench",
        "--git-password",
        "bench-token",
        "--workspace-id",
        WS,
        "--yes",
      ]),
    );
    const restoreSeconds = (performance.now() - started) / 1000;
    if (restore.code !== 0) throw new Error(`millrace restore failed: ${restore.stdout}\n${restore.stderr}`);
    const restoredCounts = (JSON.parse(restore.stdout) as { counts: Record<string, number> }).counts;
    return {
      fillSeconds,
      pullSeconds,
      pulledFiles,
      firstSyncSeconds,
      deployToCommit: summary(samples),
      deployToCommitCpu,
      rawGitPush: summary(rawSamples),
      restoreSeconds,
      restoreCpu,
      restoredCounts,
    };
  } finally {
    await secondary.current?.stop();
    await remote.close();
  }
}

export function printDrillBench(d: DrillBench, section: string): void {
  const verdict = (ok: boolean) => (ok ? "met" : "NOT met");
  const size = `${DRILL_SIZE.scripts} scripts, ${DRILL_SIZE.resources} resources, ${DRILL_SIZE.variables} variables, ${DRILL_SIZE.schedules} schedules`;
  console.log(
    `\n${section}. Git sync and disaster recovery, a workspace of ${size} (filled over REST in ${d.fillSeconds.toFixed(1)} s)`,
  );
  console.log(
    `   millrace sync pull into an empty folder: ${d.pullSeconds.toFixed(2)} s, ${d.pulledFiles} files (target <= 10 s) -> ${verdict(d.pullSeconds <= 10)}`,
  );
  console.log(
    `   first git sync of the whole workspace (link -> pushed): ${d.firstSyncSeconds.toFixed(1)} s`,
  );
  console.log(
    `   deploy -> its commit on the remote: p50 ${ms(d.deployToCommit.p50)}   p95 ${ms(d.deployToCommit.p95)}   (n=${d.deployToCommit.n}) (target p50 <= 5 s) -> ${verdict(d.deployToCommit.p50 <= 5000)}`,
  );
  console.log(
    `     the machine spent ${ms(d.deployToCommitCpu)} of CPU per deploy (every process); the git CLI cloning, ` +
      `committing and pushing one file to the same remote: p50 ${ms(d.rawGitPush.p50)} -> ratio ` +
      `${(d.deployToCommit.p50 / d.rawGitPush.p50).toFixed(2)} (Millrace also waits up to 1 s for its next poll)`,
  );
  console.log(
    `   RTO: millrace restore --from-git into an empty instance: ${d.restoreSeconds.toFixed(1)} s, ` +
      `${(d.restoreCpu / 1000).toFixed(1)} s of machine CPU (target <= 60 s) -> ${verdict(d.restoreSeconds <= 60)}`,
  );
  console.log(
    `     restored: ${Object.entries(d.restoredCounts)
      .map(([k, v]) => `${v} ${k}`)
      .join(", ")}`,
  );
}
