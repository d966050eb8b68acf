// Exit codes that scripts can rely on. Documented in docs/cli.md; never
// renumber one, only add.
export const EXIT = {
  OK: 0,
  /** Anything not listed below (a server error, a failed job with `script run`). */
  FAILED: 1,
  /** Bad command line: unknown command or option, missing argument, invalid JSON in `-d`. */
  USAGE: 2,
  /** No credentials, a wrong or expired token, or a role that may not do this. */
  UNAUTHORIZED: 3,
  /** The workspace, script, job or file named does not exist. */
  NOT_FOUND: 4,
  /** The input (a repository, a backup, arguments) was checked and refused; nothing was applied. */
  INVALID: 5,
  /** A confirmation is needed (run again with `--yes`) or the target changed meanwhile. */
  NEEDS_CONFIRMATION: 6,
  /** The server, database or git remote could not be reached. */
  UNREACHABLE: 7,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI reports as one line (plus a hint saying what to do next) and an exit code. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  readonly hint?: string;
  constructor(message: string, exitCode: ExitCode = EXIT.FAILED, hint?: string) {
    super(message);
    this.exitCode = exitCode;
    this.hint = hint;
  }
}
