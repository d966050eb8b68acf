-- The runs lists' indexes split by status (issue 38): one for queued jobs, one for finished ones,
-- none for running ones (a few per worker slot, found through the queue's index). A job row is
-- rewritten three times (enqueued, claimed, completed) and each rewrite adds an entry to every
-- index whose predicate the new row satisfies: the full indexes took one entry per rewrite, the
-- split ones take one at the enqueue and one at the completion, and the claim writes to neither.
-- That took a third off the claim's row write and a sixth off the completion's (no-op pipeline,
-- docs/performance.md). Lists across statuses read each group in order and merge them
-- (packages/core/src/jobs/queries.ts).
--
-- The new indexes are built before the old ones go, so that lists never fall back to a scan
-- meanwhile. On a populated table each build holds off writes to job for its duration (about a
-- minute per index for ten million jobs on 2 cores): run it in a quiet moment.
CREATE INDEX "job_queued_workspace_id_created_at_id_idx" ON "job"("workspace_id", "created_at" DESC, "id" DESC)
  WHERE "status" = 'queued';
CREATE INDEX "job_queued_workspace_id_script_path_created_at_id_idx" ON "job"("workspace_id", "script_path", "created_at" DESC, "id" DESC)
  WHERE "status" = 'queued';
CREATE INDEX "job_finished_workspace_id_script_path_created_at_id_idx" ON "job"("workspace_id", "script_path", "created_at" DESC, "id" DESC)
  WHERE "status" IN ('success', 'failure', 'canceled');

DROP INDEX "job_workspace_id_created_at_id_idx";
DROP INDEX "job_workspace_id_script_path_created_at_idx";
