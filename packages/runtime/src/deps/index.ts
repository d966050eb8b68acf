export {
  hasRequirements,
  importsBundledClient,
  npmRequirements,
  npmSchemeImports,
  pythonRequirements,
  RequirementsError,
  scriptRequirements,
  type NpmRequirement,
  type Requirements,
} from "./requirements.ts";
export {
  ensureInstalled,
  ensureLockInstalled,
  formatNpmLock,
  InstallError,
  parseNpmLock,
  resolveDependencies,
  type InstallOptions,
  type InstalledDependencies,
} from "./install.ts";
export { lockHash } from "./cache.ts";
export { planLock, type LockPlan } from "./windmill-locks.ts";
