// Runner programs of warm processes: they import the script once, then read one job per line on
// stdin (`{"args", "order", "env"}`) and answer each with `<mark>{"ok", "result"|"error", "ms"}\n`
// on stdout, followed by `<mark>\n` on stderr, so that the parent knows both streams hold all of
// the job's output. The mark is `\x1e` + a nonce given as the first argument.

export const DEDICATED_TS_RUNNER = "__millrace_dedicated__.ts";
export const DEDICATED_PY_RUNNER = "__millrace_dedicated__.py";

// console.log for the frames too: the user's console output and ours then share one ordered writer.
export const BUN_RUNNER = `const MARK = "\\x1e" + process.argv[2];
function describe(e: any) {
  if (e instanceof Error) {
    const stack = e.stack?.split("\\n").filter((line) => !line.includes(${JSON.stringify(DEDICATED_TS_RUNNER)})).join("\\n");
    return { name: e.name, message: e.message, stack };
  }
  let message: string;
  try {
    message = typeof e === "string" ? e : JSON.stringify(e) ?? String(e);
  } catch {
    message = String(e);
  }
  return { name: "Error", message };
}
let mod: any = null;
let loadError: unknown = null;
try {
  mod = await import("./main.ts");
  if (typeof mod.main !== "function") throw new Error("main.ts does not export a function named main");
} catch (e) {
  loadError = e;
}
const baseEnv = new Set(Object.keys(process.env));
let jobEnv: string[] = [];
console.log(MARK + JSON.stringify({ ready: true, error: loadError === null ? undefined : describe(loadError) }));
for await (const line of console) {
  if (line === "") continue;
  const job = JSON.parse(line);
  for (const key of jobEnv) if (!baseEnv.has(key)) delete process.env[key];
  jobEnv = Object.keys(job.env);
  Object.assign(process.env, job.env);
  const started = performance.now();
  let out: string;
  try {
    if (loadError !== null) throw loadError;
    const args = job.order.map((k: string) => (Object.hasOwn(job.args, k) ? job.args[k] : undefined));
    const result = await mod.main(...args);
    out = JSON.stringify({ ok: true, result: result === undefined ? null : result, ms: performance.now() - started });
  } catch (e) {
    out = JSON.stringify({ ok: false, error: describe(e), ms: performance.now() - started });
  }
  console.log(MARK + out);
  console.error(MARK);
}
process.exit(0);
`;

export const PYTHON_RUNNER = `import sys, os, json, time

MARK = "\\x1e" + sys.argv[1]
_INF = float("inf")


def _clean(value, depth=0):
    if depth > 200:
        raise ValueError("result nests too deeply")
    if isinstance(value, float):
        return value if value == value and value not in (_INF, -_INF) else None
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                k = "null" if k is None else "true" if k is True else "false" if k is False else str(k)
            out[k] = _clean(v, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [_clean(v, depth + 1) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def _error(e):
    import traceback

    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return {"name": type(e).__name__, "message": str(e),
            "stack": "".join(traceback.format_exception(type(e), e, tb))}


def _send(payload):
    sys.stdout.flush()
    sys.stdout.write(MARK + json.dumps(payload) + "\\n")
    sys.stdout.flush()
    sys.stderr.write(MARK + "\\n")
    sys.stderr.flush()


_fn = None
_load_error = None
try:
    sys.path.insert(0, os.getcwd())
    import main as _user_module

    _fn = getattr(_user_module, "main", None)
    if not callable(_fn):
        raise NameError("main.py does not define a function named main")
except BaseException as e:
    _load_error = e

sys.stdout.write(MARK + json.dumps({"ready": True, "error": None if _load_error is None else _error(_load_error)}) + "\\n")
sys.stdout.flush()
_base_env = set(os.environ)
_job_env = []
while True:
    line = sys.stdin.readline()
    if not line:
        break
    if not line.strip():
        continue
    job = json.loads(line)
    for key in _job_env:
        if key not in _base_env:
            os.environ.pop(key, None)
    _job_env = list(job["env"])
    os.environ.update(job["env"])
    started = time.perf_counter()
    try:
        if _load_error is not None:
            raise _load_error
        result = _fn(**job["args"])
        if hasattr(result, "__await__"):
            import asyncio

            async def _await(value):
                return await value

            result = asyncio.run(result if type(result).__name__ == "coroutine" else _await(result))
        payload = {"ok": True, "result": _clean(result)}
    except SystemExit as e:
        payload = {"ok": True, "result": None} if e.code in (None, 0) else {"ok": False, "error": _error(e)}
    except BaseException as e:
        payload = {"ok": False, "error": _error(e)}
    payload["ms"] = (time.perf_counter() - started) * 1000
    try:
        _send(payload)
    except BaseException as e:
        _send({"ok": False, "error": _error(e), "ms": payload["ms"]})
`;
