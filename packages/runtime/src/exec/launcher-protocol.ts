// Messages between the worker (launcher.ts) and its process launcher (launcher-process.ts).
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
   * FIFOs whose other ends the requester holds, to open as the process's stdin and outputs: its
   * input and output then go straight between it and the requester, not through the launcher
   * (see ProcessLauncher.spawn).
   */
  pipes?: ChildPipePaths;
}

export type LauncherRequest =
  | ({ type: "spawn"; id: number } & SpawnRequest)
  /** Stop reading a process's pipes (they are held open by something that escaped its group). */
  | { type: "release"; id: number };

export type LauncherReply =
  /** Sent once, when the launcher's handlers are in place. */
  | { type: "ready"; id: 0 }
  | { type: "spawned"; id: number; pid: number | undefined }
  | { type: "data"; id: number; fd: 1 | 2; chunk: Uint8Array }
  | { type: "error"; id: number; message: string; code?: string | undefined }
  | { type: "exit"; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { type: "close"; id: number };

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
    request.pipes ? { pipes: request.pipes } : {},
  );
}
