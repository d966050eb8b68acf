// Messages between the worker (launcher.ts) and its process launcher (launcher-process.ts).
import type { ChildProcess } from "node:child_process";
import type { Writable } from "node:stream";
import { spawnJobProcess, type ChildPipePaths, type SpawnedJob } from "./output-pipes.ts";

export interface SpawnRequest {
  command: string;
  args: string[];
  cwd: string;
  /** Exactly the process's variables: nothing of the worker's environment is inherited. */
  env: Record<string, string>;
  uid?: number;
  gid?: number;
  /**
   * Open a pipe on the process's fd 3, written once with `control` messages: a warm sandbox
   * waits there for the job it is to run.
   */
  control?: boolean;
  /**
   * FIFOs whose read ends the requester holds, to open as the process's outputs: its output
   * then goes straight to the requester, not through the launcher (see ProcessLauncher.spawn).
   */
  pipes?: ChildPipePaths;
}

export type LauncherRequest =
  | ({ type: "spawn"; id: number } & SpawnRequest)
  /** Stop reading a process's pipes (they are held open by something that escaped its group). */
  | { type: "release"; id: number }
  /** Write `payload` to the process's fd 3 and close it (spawned with `control`). */
  | { type: "control"; id: number; payload: string };

export type LauncherReply =
  /** Sent once, when the launcher's handlers are in place. */
  | { type: "ready"; id: 0 }
  | { type: "spawned"; id: number; pid: number | undefined }
  | { type: "data"; id: number; fd: 1 | 2; chunk: Uint8Array }
  | { type: "error"; id: number; message: string; code?: string | undefined }
  | { type: "exit"; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { type: "close"; id: number };

/** Writes a process's one control message (fd 3) and closes the pipe: the EOF ends its read. */
export function writeControl(child: ChildProcess | undefined, payload: string): void {
  const pipe = child?.stdio[3] as Writable | null | undefined;
  if (!pipe) return;
  pipe.on("error", () => {});
  pipe.end(payload);
}

/** Starts the process a request describes (from the launcher, or from the worker itself). */
export function spawnRequested(request: SpawnRequest): SpawnedJob {
  return spawnJobProcess(
    request.command,
    request.args,
    {
      cwd: request.cwd,
      env: request.env as NodeJS.ProcessEnv,
      ...(request.uid === undefined ? {} : { uid: request.uid, gid: request.gid ?? request.uid }),
    },
    { control: request.control === true, ...(request.pipes ? { pipes: request.pipes } : {}) },
  );
}
