// The spawner of the bare runs (job-cpu.ts): a small process of its own, as Millrace's launcher
// is. Node spawns with fork(), whose cost (page tables, then copy-on-write faults in the parent)
// grows with the spawning process's memory: from the bench's own process, whose heap holds a
// whole benchmark, each bare sandbox cost the machine 6–8 ms more than from a process this size.
// That cost is the spawner's, not the sandbox's, and made Millrace's ratio look better than it is.
//
// Protocol: argv[2] is the JSON run (`file`, `args`, `cwd`, `uid`, `gid`, `jobs`, `lanes`); the
// process writes "ready" once loaded, starts on a line on its stdin, writes "done" (or "error
// <message>") when the last process exited, then exits.
import { spawn } from "node:child_process";
import readline from "node:readline";

interface BareRun {
  file: string;
  args: string[];
  cwd: string;
  uid?: number;
  gid?: number;
  jobs: number;
  lanes: number;
}

const run = JSON.parse(process.argv[2] ?? "{}") as BareRun;

const one = () =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(run.file, run.args, {
      stdio: "ignore",
      env: {},
      cwd: run.cwd,
      ...(run.uid === undefined ? {} : { uid: run.uid, gid: run.gid }),
    });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${run.file} exited with ${code}`)),
    );
  });

async function all(): Promise<void> {
  let left = run.jobs;
  const lane = async () => {
    while (left-- > 0) await one();
  };
  await Promise.all(Array.from({ length: run.lanes }, lane));
}

process.stdout.write("ready\n");
const input = readline.createInterface({ input: process.stdin });
input.once("line", () => {
  input.close();
  all().then(
    () => process.stdout.write("done\n"),
    (error: unknown) => process.stdout.write(`error ${String(error)}\n`),
  );
});
