import type { PoolClient } from "@millrace/db";
import { hasRequirements, RequirementsError, scriptRequirements, type Requirements } from "@millrace/runtime";
import { invalidInput } from "../errors.ts";
import type { EnqueueInput } from "../jobs/job-input.ts";

/**
 * A job enqueued while its script version's lock is still being computed waits: it is queued
 * this much later than asked (so no worker takes it) and moved back to its time when the
 * dependency job finishes. Should that never happen (the dependency job was canceled before it
 * ran), the job runs after this delay and its worker fails it saying why.
 */
export const LOCK_HOLD_MS = 60 * 60 * 1000;

/** Refuses requirements pip or bun must not see (options, file references, bad names) at deploy. */
export function checkRequirements(language: string, content: string): Requirements | null {
  try {
    return scriptRequirements(language, content);
  } catch (error) {
    if (error instanceof RequirementsError) throw invalidInput("content", error.message);
    throw error;
  }
}

// Parsing a script for imports costs far more than a map lookup; versions are immutable.
const MAX_CACHED = 2000;
const depsByVersion = new Map<string, boolean>();

function versionHasRequirements(input: EnqueueInput): boolean {
  const key = `${input.workspaceId}:${input.scriptHash}`;
  let has = depsByVersion.get(key);
  if (has === undefined) {
    has = hasRequirements(input.language, input.content);
    if (depsByVersion.size >= MAX_CACHED) depsByVersion.delete(depsByVersion.keys().next().value!);
    depsByVersion.set(key, has);
  }
  return has;
}

/**
 * Copies each script version's lock onto its jobs, inside the enqueue transaction. Versions
 * whose lock is pending get their jobs held (see LOCK_HOLD_MS). The script rows are read FOR
 * SHARE: the dependency job's completion updates them, so it either commits first (and the lock
 * is seen here) or waits for this transaction (and then releases the jobs held here).
 */
function needsLock(input: EnqueueInput): boolean {
  return (
    input.kind === "script" && !!input.scriptHash && input.lock === undefined && versionHasRequirements(input)
  );
}

/** Whether attachLocks will read script rows for these jobs (and so needs a transaction). */
export function needsLockRead(inputs: EnqueueInput[]): boolean {
  return inputs.some(needsLock);
}

export async function attachLocks(
  client: PoolClient,
  inputs: EnqueueInput[],
  now: Date,
): Promise<EnqueueInput[]> {
  const needing = inputs.filter(needsLock);
  if (needing.length === 0) return inputs;
  const keys = [...new Set(needing.map((input) => `${input.workspaceId}\n${input.scriptHash}`))].sort();
  const { rows } = await client.query<{
    workspace_id: string;
    hash: string;
    lock: string | null;
    lock_error: string | null;
  }>(
    `SELECT s.workspace_id, s.hash, s.lock, s.lock_error
       FROM script s JOIN unnest($1::text[], $2::text[]) AS k(workspace_id, hash)
         ON s.workspace_id = k.workspace_id AND s.hash = k.hash
      ORDER BY s.workspace_id, s.hash
        FOR SHARE OF s`,
    [keys.map((key) => key.split("\n")[0]), keys.map((key) => key.split("\n")[1])],
  );
  const byKey = new Map(rows.map((row) => [`${row.workspace_id}\n${row.hash}`, row]));
  return inputs.map((input) => {
    if (!needing.includes(input)) return input;
    const row = byKey.get(`${input.workspaceId}\n${input.scriptHash}`);
    if (!row || row.lock !== null) return { ...input, lock: row?.lock ?? null };
    // A failed install: the job is not held; its worker fails it with the lock error.
    if (row.lock_error !== null) return { ...input, lock: null };
    return {
      ...input,
      lock: null,
      scheduledFor: new Date((input.scheduledFor ?? now).getTime() + LOCK_HOLD_MS),
    };
  });
}
