import type { Db, Pool } from "@millrace/db";

/** What core functions need from the process: injected, never imported as singletons. */
export interface CoreContext {
  db: Db;
  pool: Pool;
}
