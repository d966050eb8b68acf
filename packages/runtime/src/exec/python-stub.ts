import { JOB_LANG } from "./interpreters.ts";

/**
 * The first process of a warm sandbox made for python3 jobs: a python3 started ahead with the
 * job's flags (`-u -B`) and locale, waiting on stdin for the job in the bash stub's format
 * (`mode, count, env…, count, ulimit…, argv…`, see warm-sandbox.ts). It sets the limits
 * (`resource`, from the same `ulimit` arguments), then, for `python3 -u -B <wrapper>`, becomes
 * that job: the job's environment in os.environ, sys.path[0] the job folder (PYTHONPATH after
 * it), sys.argv the wrapper's, and the wrapper run as `__main__` with its absolute `__file__`,
 * as `python3 <wrapper>` would. The job then pays no interpreter start: ~20–35 ms on these VMs.
 *
 * Anything the interpreter reads at its start goes the other way, an exec of a fresh python3
 * with exactly the job's environment: any other PYTHON* variable, an LC_* variable, a LANG
 * other than the stub's, another command line. The one trace of the stub is `-c` in
 * sys.orig_argv.
 */
const PYTHON_STUB = `import os, sys
def _millrace_job():
    chunks = []
    while True:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    if not chunks:
        os._exit(0)
    f = b"".join(chunks).decode("utf-8", "surrogateescape").split("\\0")[:-1]
    n = int(f[1])
    env = dict(e.split("=", 1) for e in f[2 : 2 + n])
    u = int(f[2 + n])
    argv = f[3 + n + u :]
    import resource
    kinds = {"-t": resource.RLIMIT_CPU, "-f": resource.RLIMIT_FSIZE, "-c": resource.RLIMIT_CORE, "-u": resource.RLIMIT_NPROC}
    try:
        for spec in f[3 + n : 3 + n + u]:
            words = spec.split()
            which = words.pop(0) if words[0] in ("-S", "-H") else ""
            kind = kinds[words[0]]
            value = int(words[1]) * (1024 if words[0] == "-f" else 1)
            soft, hard = resource.getrlimit(kind)
            resource.setrlimit(kind, (value if which != "-H" else soft, value if which != "-S" else hard))
    except Exception:
        os._exit(126)
    fresh = (
        argv[:3] != [sys.executable, "-u", "-B"]
        or len(argv) != 4
        or "/" in argv[3]
        or env.get("LANG") != os.environ.get("LANG")
        or any(k.startswith("LC_") or (k.startswith("PYTHON") and k != "PYTHONPATH") for k in env)
    )
    # bwrap's --chdir sets PWD for the command it starts: the stub has it, and so must the job.
    env.setdefault("PWD", os.environ.get("PWD", os.getcwd()))
    if fresh:
        os.execve(argv[0], argv, env)
    os.environ.clear()
    os.environ.update(env)
    cwd = os.getcwd()
    sys.path[0] = cwd
    sys.path[1:1] = [p for p in env.get("PYTHONPATH", "").split(":") if p]
    sys.argv = [argv[3]]
    path = os.path.join(cwd, argv[3])
    globals().update(__file__=path, __cached__=None)
    with open(path, "rb") as source:
        return compile(source.read(), path, "exec")
exec(globals().pop("_millrace_job")())
`;

/** The command of a warm python3 sandbox's first process, and the environment it starts with. */
export function pythonStub(python: string): { args: string[]; env: Record<string, string> } {
  // The job's own flags and locale: what the interpreter fixes at its start must be the job's.
  return { args: [python, "-u", "-B", "-c", PYTHON_STUB], env: { LANG: JOB_LANG } };
}
