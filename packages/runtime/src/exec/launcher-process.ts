// The process launcher: a small Node process that starts job processes on the worker's behalf and
// relays their output over IPC (see launcher.ts for why). It imports nothing but node: modules on
// purpose: the smaller this process stays, the cheaper each fork it makes.
import { spawnRequested, type LauncherReply, type LauncherRequest } from "./launcher-protocol.ts";
import type { SpawnedJob } from "./output-pipes.ts";

const children = new Map<number, SpawnedJob>();

// Backpressure: a job printing as fast as it can must not pile its output up in this process
// while the IPC channel drains. Past HIGH messages in flight every pipe pauses until LOW.
const HIGH = 64;
const LOW = 16;
let inFlight = 0;
let paused = false;

function send(reply: LauncherReply): void {
  if (!process.connected) return;
  inFlight++;
  process.send!(reply, undefined, {}, () => {
    inFlight--;
    if (paused && inFlight <= LOW) {
      paused = false;
      for (const job of children.values()) {
        job.stdout?.resume();
        job.stderr?.resume();
      }
    }
  });
  if (!paused && inFlight >= HIGH) {
    paused = true;
    for (const job of children.values()) {
      job.stdout?.pause();
      job.stderr?.pause();
    }
  }
}

function start(request: Extract<LauncherRequest, { type: "spawn" }>): void {
  const { id } = request;
  let job: SpawnedJob;
  try {
    job = spawnRequested(request);
  } catch (error) {
    send({
      type: "error",
      id,
      message: (error as Error).message,
      code: (error as NodeJS.ErrnoException).code,
    });
    send({ type: "close", id });
    return;
  }
  const { child, stdout, stderr } = job;
  children.set(id, job);
  send({ type: "spawned", id, pid: child.pid });
  if (paused) {
    stdout?.pause();
    stderr?.pause();
  }
  stdout?.on("data", (chunk: Buffer) => send({ type: "data", id, fd: 1, chunk }));
  stderr?.on("data", (chunk: Buffer) => send({ type: "data", id, fd: 2, chunk }));
  child.on("error", (error: NodeJS.ErrnoException) =>
    send({ type: "error", id, message: error.message, code: error.code }),
  );
  child.on("exit", (code, signal) => send({ type: "exit", id, code, signal }));
  void job.closed.then(() => {
    children.delete(id);
    send({ type: "close", id });
  });
}

process.on("message", (request: LauncherRequest) => {
  if (request.type === "spawn") start(request);
  else {
    // The worker gave up waiting for pipes held open by an escaped process: stop reading them.
    const job = children.get(request.id);
    job?.stdout?.destroy();
    job?.stderr?.destroy();
  }
});

// Ctrl-C or a SIGTERM sent to the worker's process group must not end running jobs' output: the
// worker lets them finish (its grace period), then disconnects, and that is when this one exits.
process.on("SIGINT", () => {});
process.on("SIGTERM", () => {});

// The worker is gone (or stopped us): nothing left to serve, and the jobs still running here go
// with it. A worker that stops cleanly has already killed or waited for them; one that died
// (kill -9) will have its jobs put back in the queue by the zombie monitor, and a job must never
// run there while it still runs here. Sandboxed jobs would die anyway (bwrap's --die-with-parent);
// this also reaches the process groups of jobs run without the sandbox.
process.on("disconnect", () => {
  for (const job of children.values()) {
    try {
      if (job.child.pid !== undefined) process.kill(-job.child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  process.exit(0);
});

send({ type: "ready", id: 0 });
