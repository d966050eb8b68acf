// Git transport of server-side git sync and restore (issue 20): isomorphic-git over HTTP(S).
export { changedPaths, ensureClone, commitFiles, pushWithRebase, pullFiles } from "./transport.ts";
export type {
  GitAuth,
  GitAuthor,
  GitRemoteOptions,
  CommitFilesOptions,
  EnsureCloneResult,
  PushResult,
} from "./transport.ts";
export {
  GitSyncError,
  GitAuthError,
  GitRemoteUnavailableError,
  GitConflictError,
  redactUrl,
} from "./errors.ts";
