export { assertNodeVersion } from "./node-version.ts";
export {
  parseEnv,
  booleanVar,
  positiveIntVar,
  databaseUrlVar,
  directDatabaseUrlVar,
  requireDirectUrlWhenPooled,
  tagListVar,
  metricsAddrVar,
  secretKeyVar,
  requiredSecretKeyVar,
} from "./env.ts";
