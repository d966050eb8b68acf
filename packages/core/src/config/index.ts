export { assertNodeVersion } from "./node-version.ts";
export {
  parseEnv,
  booleanVar,
  positiveIntVar,
  databaseUrlVar,
  tagListVar,
  secretKeyVar,
  requiredSecretKeyVar,
} from "./env.ts";
