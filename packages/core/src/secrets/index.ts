export { SECRET_KEY_VAR, MIN_SECRET_KEY_LENGTH, SecretKeyError, instanceKeyProblem } from "./cipher.ts";
export { createKeyring, isEncrypted, SECRET_PREFIX, type Keyring } from "./keyring.ts";
export { createJobToken, revokeJobToken, JOB_TOKEN_MARGIN_SECS, type JobTokenInput } from "./job-token.ts";
export type { SecretsContext } from "./context.ts";
