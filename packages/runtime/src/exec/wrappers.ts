// Files the runtime writes into a job folder next to the user's code. Dot-prefixed so that they do
// not collide with files a script creates in its working directory.
export const ARGS_FILE = ".millrace-args.json";
export const RESULT_FILE = ".millrace-result.json";
export const PYTHON_WRAPPER = "__millrace_run__.py";
export const TS_WRAPPER = "__millrace_run__.ts";

/** Wrappers write `{ok: true, result}` or `{ok: false, error: {name, message, stack}}` to RESULT_FILE. */
export interface WrapperResult {
  ok: boolean;
  result?: unknown;
  error?: { name?: unknown; message?: unknown; stack?: unknown };
}

const MAX_LITERAL_DEPTH = 64;

/**
 * Renders JSON-compatible args as a Python literal so that the wrapper does not need to import `json`
 * (whose `re` dependency alone costs ~5 ms per job). JSON string escapes are a subset of Python's.
 * Returns undefined when the value nests too deeply for the Python parser.
 */
export function pythonLiteral(value: unknown, depth = 0): string | undefined {
  if (depth > MAX_LITERAL_DEPTH) return undefined;
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "None";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "bigint") return String(value);
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return pythonLiteral((value as { toJSON(): unknown }).toJSON(), depth + 1);
  }
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (const item of value) {
      const text = pythonLiteral(item, depth + 1);
      if (text === undefined) return undefined;
      items.push(text);
    }
    return `[${items.join(", ")}]`;
  }
  if (typeof value === "object") {
    const entries: string[] = [];
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue;
      const text = pythonLiteral(item, depth + 1);
      if (text === undefined) return undefined;
      entries.push(`${JSON.stringify(key)}: ${text}`);
    }
    return `{${entries.join(", ")}}`;
  }
  return JSON.stringify(String(value));
}

/** `argsLiteral` undefined: the wrapper reads ARGS_FILE with the json module instead. */
export function pythonWrapperSource(argsLiteral: string | undefined): string {
  const load =
    argsLiteral === undefined
      ? `import json\n\nwith open(${JSON.stringify(ARGS_FILE)}, encoding="utf-8") as _f:\n    _ARGS = json.load(_f)["args"]\n`
      : `_ARGS = ${argsLiteral}\n`;
  return load + PYTHON_WRAPPER_BODY;
}

// Only builtin modules at start-up: traceback and asyncio are imported when needed. SHLVL=0 is
// what a warm sandbox's stub leaves (see warm-sandbox.ts), not part of the job's environment.
const PYTHON_WRAPPER_BODY = `import os
import sys

if os.environ.get("SHLVL") == "0":
    del os.environ["SHLVL"]

_ESCAPES = {i: "\\\\u%04x" % i for i in range(32)}
_ESCAPES.update({34: '\\\\"', 92: "\\\\\\\\", 8: "\\\\b", 9: "\\\\t", 10: "\\\\n", 12: "\\\\f", 13: "\\\\r"})
_INF = float("inf")


def _dump(value, out, active):
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append('"' + value.translate(_ESCAPES) + '"')
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(float.__repr__(value) if value == value and value not in (_INF, -_INF) else "null")
    elif isinstance(value, (dict, list, tuple)):
        if id(value) in active:
            raise ValueError("Circular reference detected")
        active.add(id(value))
        if isinstance(value, dict):
            out.append("{")
            for i, (k, v) in enumerate(value.items()):
                if i:
                    out.append(",")
                if not isinstance(k, str):
                    k = "null" if k is None else "true" if k is True else "false" if k is False else str(k)
                out.append('"' + k.translate(_ESCAPES) + '":')
                _dump(v, out, active)
            out.append("}")
        else:
            out.append("[")
            for i, v in enumerate(value):
                if i:
                    out.append(",")
                _dump(v, out, active)
            out.append("]")
        active.discard(id(value))
    else:
        out.append('"' + str(value).translate(_ESCAPES) + '"')


def _to_json(value):
    out = []
    _dump(value, out, set())
    return "".join(out)


def _error(e):
    import traceback

    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return {
        "ok": False,
        "error": {
            "name": type(e).__name__,
            "message": str(e),
            "stack": "".join(traceback.format_exception(type(e), e, tb)),
        },
    }


async def _await(value):
    return await value


def _run():
    try:
        import main as user_module

        fn = getattr(user_module, "main", None)
        if not callable(fn):
            raise NameError("main.py does not define a function named main")
        result = fn(**_ARGS)
        if hasattr(result, "__await__"):
            import asyncio

            result = asyncio.run(result if type(result).__name__ == "coroutine" else _await(result))
        return {"ok": True, "result": result}
    except SystemExit as e:
        if e.code is None or e.code == 0:
            return {"ok": True, "result": None}
        return _error(e)
    except BaseException as e:
        return _error(e)


try:
    _text = _to_json(_run())
except BaseException as e:
    _text = _to_json(_error(e))
# The script may have closed them (sys.stdout.close()): its result still counts.
for _stream in (sys.stdout, sys.stderr):
    try:
        _stream.flush()
    except BaseException:
        pass
with open(${JSON.stringify(RESULT_FILE)}, "w", encoding="utf-8", errors="surrogatepass") as _f:
    _f.write(_text)
`;

/** Args are inlined: reading a file in Bun costs an extra `node:fs` load (~1 ms) per job. */
function tsWrapper(
  order: string[],
  args: Record<string, unknown>,
  io: { write: string; exit: string; dropStubShellLevel: string },
): string {
  // JSON.parse of a string literal, not an object literal: `__proto__` keys in user data must stay data.
  const input = JSON.stringify(JSON.stringify({ order, args }));
  return `${io.dropStubShellLevel}
const input = JSON.parse(${input});
function describe(e: any) {
  if (e instanceof Error) {
    const stack = e.stack?.split("\\n").filter((line) => !line.includes(${JSON.stringify(TS_WRAPPER)})).join("\\n");
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
let out: string;
try {
  const mod: any = await import("./main.ts");
  if (typeof mod.main !== "function") throw new Error("main.ts does not export a function named main");
  const args = input.order.map((k: string) => (Object.hasOwn(input.args, k) ? input.args[k] : undefined));
  const result = await mod.main(...args);
  out = JSON.stringify({ ok: true, result: result === undefined ? null : result });
} catch (e) {
  out = JSON.stringify({ ok: false, error: describe(e) });
}
${io.write}(${JSON.stringify(RESULT_FILE)}, out);
${io.exit}(0);
`;
}

// SHLVL=0 is what a warm sandbox's stub leaves (see warm-sandbox.ts), not part of the job's
// environment. Exiting explicitly: scripts often leave handles open (clients, timers) that would otherwise keep the
// process alive until the timeout.
export function bunWrapperSource(order: string[], args: Record<string, unknown>): string {
  return tsWrapper(order, args, {
    write: "await Bun.write",
    exit: "process.exit",
    dropStubShellLevel: 'if (process.env.SHLVL === "0") delete process.env.SHLVL;',
  });
}

export function denoWrapperSource(order: string[], args: Record<string, unknown>): string {
  return tsWrapper(order, args, {
    write: "Deno.writeTextFileSync",
    exit: "Deno.exit",
    dropStubShellLevel: 'if (Deno.env.get("SHLVL") === "0") Deno.env.delete("SHLVL");',
  });
}
