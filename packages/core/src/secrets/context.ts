import type { CoreContext } from "../context.ts";
import type { Keyring } from "./keyring.ts";

/** Core functions that touch secret values need the process's keyring besides the database. */
export interface SecretsContext extends CoreContext {
  secrets: Keyring;
  /**
   * Called with every secret value decrypted for a caller (a worker resolving a job's `$var:` and
   * `$res:` arguments: it masks them in the job's logs and result). Without it, a secret read by a
   * job's token is announced to the workers instead (see JOB_SECRET_READ_CHANNEL).
   */
  onSecretRevealed?(value: string): void;
}
