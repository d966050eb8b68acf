// The process launcher: a small Node process that starts job processes on the worker's behalf and
// relays their output over IPC (see launcher.ts for why). It imports nothing but node: modules on
// purpose: the smaller this process stays, the cheaper each fork it makes.
import { spawn, type ChildProcess } from "node:child_process";
import { writeControl, type LauncherReply, type LauncherRequest } from "./launcher-protocol.ts";

const children = new Map<number, ChildProcess>();

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
      for (const child of children.values()) {
        child.stdout?.resume();
        child.stderr?.resume();
      }
    }
  });
  if (!paused && inFlight >= HIGH) {
    paused = true;
    for (const child of children.values()) {
      child.stdout?.pause();
      child.stderr?.pause();
    }
  }
}

function start(request: Extract<LauncherRequest, { type: "spawn" }>): void {
  const { id } = request;
  let child: ChildProcess;
  try {
    child = spawn(request.command, request.args, {
      cwd: request.cwd,
      env: request.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe", request.control ? "pipe" : "ignore"],
      ...(request.uid === undefined ? {} : { uid: request.uid, gid: request.gid ?? request.uid }),
    });
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
  children.set(id, child);
  send({ type: "spawned", id, pid: child.pid });
  if (paused) {
    child.stdout?.pause();
    child.stderr?.pause();
  }
  child.stdout?.on("data", (chunk: Buffer) => send({ type: "data", id, fd: 1, chunk }));
  child.stderr?.on("data", (chunk: Buffer) => send({ type: "data", id, fd: 2, chunk }));
  child.on("error", (error: NodeJS.ErrnoException) =>
    send({ type: "error", id, message: error.message, code: error.code }),
  );
  child.on("exit", (code, signal) => send({ type: "exit", id, code, signal }));
  child.on("close", () => {
    children.delete(id);
    send({ type: "close", id });
  });
}

process.on("message", (request: LauncherRequest) => {
  if (request.type === "spawn") start(request);
  else if (request.type === "control") writeControl(children.get(request.id), request.payload);
  else {
    // The worker gave up waiting for pipes held open by an escaped process: stop reading them.
    const child = children.get(request.id);
    child?.stdout?.destroy();
    child?.stderr?.destroy();
  }
});

// Ctrl-C or a SIGTERM sent to the worker's process group must not end running jobs' output: the
// worker lets them finish (its grace period), then disconnects, and that is when this one exits.
process.on("SIGINT", () => {});
process.on("SIGTERM", () => {});

// The worker is gone (or stopped us): nothing left to serve. Job processes are in sessions of
// their own and are not killed here, as they would not be if the worker had spawned them.
process.on("disconnect", () => process.exit(0));

send({ type: "ready", id: 0 });
