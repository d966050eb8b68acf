export { assertNodeVersion } from "./node-version.ts";
export {
  parseEnv,
  booleanVar,
  positiveIntVar,
  databaseUrlVar,
  tagListVar,
  metricsAddrVar,
  secretKeyVar,
  requiredSecretKeyVar,
} from "./env.ts";
