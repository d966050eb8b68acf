// Messages between the worker (launcher.ts) and its process launcher (launcher-process.ts).

export interface SpawnRequest {
  command: string;
  args: string[];
  cwd: string;
  /** Exactly the process's variables: nothing of the worker's environment is inherited. */
  env: Record<string, string>;
  uid?: number;
  gid?: number;
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
