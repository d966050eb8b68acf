// Times the bare start of one interpreter, from a process that imports nothing but node: modules.
// Run as a child of the bench: a spawn forks its caller, and the bench process (which loads the
// runtime and the TypeScript compiler) would make every start look slower than it is.
// argv[2]: JSON { command, args, env, cwd, runs, warmup }; prints the samples (ms) as JSON.
import { spawn } from "node:child_process";

interface Input {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  runs: number;
  warmup: number;
}

const input = JSON.parse(process.argv[2] ?? "{}") as Input;

function once(): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(input.command, input.args, {
      cwd: input.cwd,
      env: input.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stdout.resume();
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(performance.now() - started);
      else reject(new Error(`${input.command} exited with ${code}: ${err}`));
    });
  });
}

const samples: number[] = [];
for (let i = 0; i < input.warmup + input.runs; i++) {
  const elapsed = await once();
  if (i >= input.warmup) samples.push(elapsed);
}
console.log(JSON.stringify(samples));
