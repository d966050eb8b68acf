import { JOB_LANG, jobPath } from "./interpreters.ts";
import { TS_WRAPPER } from "./wrappers.ts";

/**
 * The first process of a warm sandbox made for bun jobs: a bun started ahead, waiting on stdin for
 * the job in the bash stub's format (`mode, count, env…, count, ulimit…, argv…`, see
 * warm-sandbox.ts). It sets the limits (setrlimit through bun:ffi, from the same `ulimit`
 * arguments), the job's environment and argv, then imports the job's wrapper: the job pays no
 * interpreter start, ~20 ms on these VMs. The traces of the stub: `-e` in /proc/self/cmdline,
 * and `Bun.main` (bun does not let it be changed) naming `[eval]` rather than the wrapper.
 *
 * bun reads some variables only at its start (NODE_PATH for resolution, proxies, TLS, colours,
 * locale): the stub starts with the job's own (`bunStartEnv`), and a job whose variables differ
 * from them, other than the per-job ones bun never reads (`RUNTIME_ONLY`), does not use the stub
 * (`bunStubCanRun`): it runs in a sandbox made for it. bun cannot exec itself again as the python3
 * stub does, so that check is made before the job is handed over.
 */
const BUN_STUB = `const fs = require("node:fs");
const { resolve } = require("node:path");
// Ahead of the job: dlopen compiles its trampolines.
const libc = require("bun:ffi").dlopen("libc.so.6", {
  getrlimit: { args: ["i32", "ptr"], returns: "i32" },
  setrlimit: { args: ["i32", "ptr"], returns: "i32" },
  dup2: { args: ["i32", "i32"], returns: "i32" },
}).symbols;
const data = fs.readFileSync(0);
const nullFd = fs.openSync("/dev/null", "r");
if (libc.dup2(nullFd, 0) !== 0) process.exit(126);
fs.closeSync(nullFd);
if (data.length === 0) process.exit(0);
const f = data.toString("utf8").split("\\0").slice(0, -1);
const n = Number(f[1]);
const u = Number(f[2 + n]);
const argv = f.slice(3 + n + u);
const kinds = { "-t": 0, "-f": 1, "-c": 4, "-u": 6 };
for (const spec of f.slice(3 + n, 3 + n + u)) {
  const words = spec.split(" ");
  const which = words[0] === "-S" || words[0] === "-H" ? words.shift() : "";
  const kind = kinds[words[0]];
  const limit = new BigUint64Array(2);
  if (kind === undefined || !/^[0-9]+$/.test(words[1] ?? "") || libc.getrlimit(kind, limit) !== 0) process.exit(126);
  const value = BigInt(words[1]) * (words[0] === "-f" ? 1024n : 1n);
  if (which !== "-H") limit[0] = value;
  if (which !== "-S") limit[1] = value;
  if (libc.setrlimit(kind, limit) !== 0) process.exit(126);
}
// bwrap's --chdir sets PWD for the command it starts: the stub has it, and so must the job.
const pwd = process.env.PWD;
for (const name of Object.keys(process.env)) delete process.env[name];
for (const entry of f.slice(2, 2 + n)) {
  const at = entry.indexOf("=");
  process.env[entry.slice(0, at)] = entry.slice(at + 1);
}
if (pwd !== undefined && process.env.PWD === undefined) process.env.PWD = pwd;
const wrapper = resolve(argv[1]);
process.argv.splice(1, Infinity, wrapper);
process.execArgv.length = 0;
await import(wrapper);
`;

// Per-job variables (the job's identity, token, callback URLs, python's path): bun reads none of
// them at its start, so they may differ from the stub's.
const RUNTIME_ONLY = /^(WM_.*|BASE_URL|BASE_INTERNAL_URL|PYTHONPATH)$/;

// Set by executeJob for every job, from the job's folder (the stub's own, see warm-sandbox.ts).
const SET_PER_FOLDER = new Set(["PATH", "HOME", "TMPDIR", "LANG"]);

/** The variables of a bun job that its stub must start with (part of the warm sandbox's spec). */
export function bunStartEnv(jobEnv: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(jobEnv).filter(([name]) => !RUNTIME_ONLY.test(name) && !SET_PER_FOLDER.has(name)),
  );
}

/** The command of a warm bun sandbox's first process, and the environment it starts with. */
export function bunStub(
  bun: string,
  startEnv: Record<string, string>,
  dir: string,
): { args: string[]; env: Record<string, string> } {
  return {
    args: [bun, "-e", BUN_STUB],
    env: { ...startEnv, PATH: jobPath(), HOME: dir, TMPDIR: dir, LANG: JOB_LANG },
  };
}

/**
 * Whether a stub started with `stubEnv` can become the job `argv` with `jobEnv`: the job is bun
 * running the wrapper, and every variable bun may read at its start has the stub's value.
 */
export function bunStubCanRun(
  bun: string,
  stubEnv: Record<string, string>,
  jobEnv: Record<string, string>,
  argv: string[],
): boolean {
  if (argv.length !== 2 || argv[0] !== bun || argv[1] !== TS_WRAPPER) return false;
  for (const name of new Set([...Object.keys(stubEnv), ...Object.keys(jobEnv)])) {
    if (RUNTIME_ONLY.test(name)) continue;
    if (stubEnv[name] !== jobEnv[name]) return false;
  }
  return true;
}
