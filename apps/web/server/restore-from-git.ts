// Restore straight from a git remote (superadmins): the branch is cloned into a temp folder, its
// files read, the folder removed. Shared by POST /api/restore and the Restore page's tRPC call.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AppError } from "@millrace/core";
import { pullFiles } from "@millrace/sync/git";
import { z } from "zod";

/** Repository files: relative paths (no `..`, no leading `/`) to UTF-8 text. */
export const repositoryFilesSchema = z.record(
  z
    .string()
    .regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$))[^\0]{1,1000}$/, "must be a relative path inside the repository"),
  z.string(),
);

/** Where a restore reads from, when not from files sent along. */
export const gitRestoreSourceSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL of a git repository" }),
  branch: z.string().min(1).optional(),
  username: z.string().optional(),
  password: z.string().optional(),
});

/** A workspace's git sync settings as the REST API and the Git sync page send them. */
export const gitSyncSettingsSchema = z.strictObject({
  remote_url: z.string().min(1, "a remote URL is required"),
  branch: z.string().nullish(),
  username: z.string().nullish(),
  password: z.string().nullish(),
  include_kinds: z.array(z.string()).nullish(),
  include_instance_config: z.boolean().nullish(),
  include_password_hashes: z.boolean().nullish(),
  enabled: z.boolean().nullish(),
});

export type GitRestoreSource = z.infer<typeof gitRestoreSourceSchema>;

/**
 * The repository files of `source` (path → UTF-8 text). A remote that cannot be read is a 400
 * naming `git.url`; a branch without files one naming `git.branch` (restoring it would empty the
 * workspace).
 */
export async function filesFromGit(source: GitRestoreSource): Promise<Map<string, string>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-restore-"));
  let files: Map<string, string>;
  try {
    files = await pullFiles({
      dir,
      url: source.url,
      branch: source.branch || "main",
      auth:
        source.username || source.password
          ? { username: source.username, password: source.password }
          : undefined,
    }).catch((error: unknown) => {
      throw new AppError("INVALID_INPUT", `git.url: ${(error as Error).message}`, "git.url");
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (files.size === 0)
    throw new AppError("INVALID_INPUT", `git.branch: the branch has no files`, "git.branch");
  return files;
}

/** The files a restore reads: cloned from `git`, or the ones sent along. */
export function restoreSourceFiles(input: {
  git?: GitRestoreSource;
  files?: Record<string, string>;
}): Promise<Map<string, string>> | Map<string, string> {
  return input.git ? filesFromGit(input.git) : new Map(Object.entries(input.files ?? {}));
}
