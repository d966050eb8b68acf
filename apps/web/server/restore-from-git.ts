// Restore straight from a git remote (superadmins): the branch is cloned into a temp folder, its
// files read, the folder removed. Shared by POST /api/restore and the Restore page's tRPC call.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AppError } from "@millrace/core";
import { pullFiles } from "@millrace/sync/git";

export interface GitRestoreSource {
  url: string;
  branch?: string;
  username?: string;
  password?: string;
}

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
