import type { CoreContext } from "../context.ts";
import type { Keyring } from "./keyring.ts";

/** Core functions that touch secret values need the process's keyring besides the database. */
export interface SecretsContext extends CoreContext {
  secrets: Keyring;
}
