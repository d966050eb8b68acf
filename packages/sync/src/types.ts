// The small shapes every module of the sync layout shares (JSON, languages, problems found): the
// model (model.ts) is built from flows.ts and settings.ts, which read these without importing it.

/** JSON values as they travel through YAML files. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** The languages Millrace runs (the code file extension of each: `codeExtension`). */
export const SYNC_LANGUAGES = ["bash", "python3", "bun", "deno", "postgresql"] as const;
export type SyncLanguage = (typeof SYNC_LANGUAGES)[number];

/** One problem found in a repository. */
export interface SyncError {
  file: string;
  field?: string;
  message: string;
}

/** A file wmill would sync but Millrace does not read yet (apps, triggers, …). */
export interface SkippedFile {
  file: string;
  reason: string;
}
