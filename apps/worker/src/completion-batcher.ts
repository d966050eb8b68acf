import { completeJobs, type Boss, type Completion } from "@millrace/core";
import type { Pool } from "@millrace/db";

/**
 * Records completions in as few transactions as possible without adding latency: a completion
 * that arrives while no write is in flight is written at once; those that arrive during a write
 * go together in the next one. Under load this turns N commits into one.
 */
export class CompletionBatcher {
  private pending: { completion: Completion; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private writing: Promise<void> | null = null;
  private readonly pool: Pool;
  private readonly boss: Boss;

  constructor(pool: Pool, boss: Boss) {
    this.pool = pool;
    this.boss = boss;
  }

  add(completion: Completion): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ completion, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, 500);
      try {
        await completeJobs(
          this.pool,
          this.boss,
          batch.map((entry) => entry.completion),
        );
        for (const entry of batch) entry.resolve();
      } catch {
        // One bad row must not lose the others: retry them one by one.
        for (const entry of batch) {
          try {
            await completeJobs(this.pool, this.boss, [entry.completion]);
            entry.resolve();
          } catch (single) {
            entry.reject(single);
          }
        }
      }
    }
    this.writing = null;
  }

  /** Resolves once everything added so far is durable. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }
}
