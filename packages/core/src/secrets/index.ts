export { SECRET_KEY_VAR, MIN_SECRET_KEY_LENGTH, SecretKeyError, instanceKeyProblem } from "./cipher.ts";
export { createKeyring, isEncrypted, SECRET_PREFIX, type Keyring, type WorkspaceDataKey } from "./keyring.ts";
export {
  getWorkspaceEncryptionKey,
  setWorkspaceEncryptionKey,
  workspaceKeyProblem,
  type SetKeyResult,
} from "./workspace-key.ts";
export {
  issueJobTokensSql,
  jobBoundsSql,
  boundsOfJob,
  JOB_TOKEN_KINDS,
  JOB_TOKEN_MARGIN_SECS,
  revokeJobTokens,
  revokeTokensOfJob,
} from "./job-token.ts";
export type { SecretsContext } from "./context.ts";
export { MIN_SECRET_CHARS, SECRET_MASK, SecretMasker } from "./masker.ts";
