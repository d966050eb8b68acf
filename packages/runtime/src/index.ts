export { LANGUAGES, DEFAULT_TAGS, isLanguage, defaultTagForLanguage } from "./languages.ts";
export type { Language } from "./languages.ts";
export { SignatureError } from "./schema/types.ts";
export type { ArgSchema, PropertySchema } from "./schema/types.ts";
export { inferSchema } from "./schema/index.ts";
export { ArgsError, validateArgs } from "./args/validate-args.ts";
export { executeJob } from "./exec/execute.ts";
export type { ExecuteRequest, ExecuteOutcome } from "./exec/execute.ts";
export { interpreterPaths } from "./exec/interpreters.ts";
