import { parseJobSecretRead, type ClaimedJob, type Keyring } from "@millrace/core";
import type { Pool } from "@millrace/db";
import { SecretMasker } from "./secret-masker.ts";

/**
 * The secret values a running job got, masked in its logs and result: those resolved into its
 * `$var:`/`$res:` arguments (see prepareCallback) and those its token read while it ran (announced
 * by the server that answered, see JOB_SECRET_READ_CHANNEL).
 */
export class JobSecrets {
  readonly masker = new SecretMasker();
  private readonly loading = new Set<Promise<void>>();
  readonly job: Pick<ClaimedJob, "id" | "workspaceId" | "permissionedAs">;

  constructor(job: Pick<ClaimedJob, "id" | "workspaceId" | "permissionedAs">) {
    this.job = job;
  }

  /** A value being decrypted: output is not stored before it is known (see `settled`). */
  track(value: Promise<string | null>): void {
    const loaded = value.then(
      (plain) => {
        if (plain !== null) this.masker.add(plain);
      },
      () => {},
    );
    this.loading.add(loaded);
    void loaded.finally(() => this.loading.delete(loaded));
  }

  /** Resolves once every value announced so far is in the masker. */
  async settled(): Promise<void> {
    while (this.loading.size > 0) await Promise.all(this.loading);
  }
}

const running = new Map<string, JobSecrets>();

/** Starts collecting a job's secrets; `release` when the job is recorded. */
export function watchJobSecrets(job: Pick<ClaimedJob, "id" | "workspaceId" | "permissionedAs">): {
  secrets: JobSecrets;
  release(): void;
} {
  const secrets = new JobSecrets(job);
  running.set(job.id, secrets);
  return {
    secrets,
    release: () => {
      if (running.get(job.id) === secrets) running.delete(job.id);
    },
  };
}

/** The secrets of a running job of this worker, if it is one. */
export function secretsOfJob(jobId: string): JobSecrets | undefined {
  return running.get(jobId);
}

/**
 * A job token read a secret (a notification from the server that answered it): every running job
 * of that user in that workspace masks its value. Jobs cannot be told apart by the notification,
 * only by whom they run as; the value is decrypted here, from the payload when it carries it.
 */
export function secretReadByJob(deps: { pool: Pool; secrets: Keyring }, payload: string): void {
  const read = parseJobSecretRead(payload);
  if (!read) return;
  const jobs = [...running.values()].filter(
    (secrets) =>
      secrets.job.workspaceId === read.workspaceId && secrets.job.permissionedAs === `u/${read.username}`,
  );
  if (jobs.length === 0) return;
  const value = (async () => {
    if (read.stored !== null) {
      const plain = await deps.secrets.tryDecrypt(deps.pool, read.workspaceId, read.stored);
      if (plain !== null) return plain;
      // Encrypted under a workspace key replaced since (setWorkspaceEncryptionKey): the value
      // stored now is the same secret under the new key.
    }
    const { rows } = await deps.pool.query<{ value: string }>(
      "SELECT value FROM variable WHERE workspace_id = $1 AND path = $2 AND is_secret",
      [read.workspaceId, read.path],
    );
    const stored = rows[0]?.value ?? null;
    return stored === null ? null : deps.secrets.decrypt(deps.pool, read.workspaceId, stored);
  })();
  for (const secrets of jobs) secrets.track(value);
}
