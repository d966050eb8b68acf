// Per-job overhead of executeJob: p50 of a trivial job minus p50 of spawning the same interpreter on an
// equivalent file directly. Usage: node packages/runtime/bench/overhead.ts [runs]
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { executeJob, interpreterPaths } from "../src/index.ts";
import type { Language } from "../src/index.ts";

const runs = Number(process.argv[2] ?? 50);
const root = mkdtempSync(path.join(os.tmpdir(), "millrace-bench-"));
const bin = interpreterPaths();

const cases: { language: Language; content: string; bare: [string, string[], string, string] }[] = [
  { language: "bash", content: "echo 1\n", bare: [bin.bash, ["main.sh"], "main.sh", "echo 1\n"] },
  {
    language: "python3",
    content: "def main():\n    return 1\n",
    bare: [bin.python3, ["-u", "-B", "main.py"], "main.py", "def main():\n    return 1\nmain()\n"],
  },
  {
    language: "bun",
    content: "export function main() {\n  return 1;\n}\n",
    bare: [bin.bun, ["main.ts"], "main.ts", "export function main() {\n  return 1;\n}\nmain();\n"],
  },
  {
    language: "deno",
    content: "export function main() {\n  return 1;\n}\n",
    bare: [
      bin.deno,
      ["run", "--allow-all", "--no-prompt", "--no-config", "main.ts"],
      "main.ts",
      "export function main() {\n  return 1;\n}\nmain();\n",
    ],
  },
];

function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function bareRun(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const env = {
      PATH: "/usr/bin:/bin",
      HOME: cwd,
      TMPDIR: cwd,
      LANG: "C.UTF-8",
      DENO_DIR: path.join(root, ".deno-cache"),
    };
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.resume();
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`)),
    );
  });
}

for (const c of cases) {
  const bareDir = path.join(root, `bare-${c.language}`);
  mkdirSync(bareDir);
  writeFileSync(path.join(bareDir, c.bare[2]), c.bare[3]);
  const bare: number[] = [];
  const job: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    let t = performance.now();
    await bareRun(c.bare[0], c.bare[1], bareDir);
    if (i >= 3) bare.push(performance.now() - t);
    t = performance.now();
    const outcome = await executeJob({
      jobId: `job-${c.language}-${i}`,
      language: c.language,
      content: c.content,
      args: {},
      argOrder: [],
      env: {},
      workRoot: root,
      timeoutMs: 30_000,
      onLog: () => {},
    });
    if (i >= 3) job.push(performance.now() - t);
    if (outcome.status !== "success") throw new Error(`${c.language}: ${JSON.stringify(outcome)}`);
  }
  const [b, j] = [p50(bare), p50(job)];
  console.log(
    `${c.language.padEnd(8)} bare p50 ${b.toFixed(1)} ms   executeJob p50 ${j.toFixed(1)} ms   overhead ${(j - b).toFixed(1)} ms`,
  );
}
rmSync(root, { recursive: true, force: true });
