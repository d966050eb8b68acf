-- The runs lists' indexes split by state (issue 38): one for queued jobs, one for finished ones,
-- none for running ones (a few per worker slot, found through the queue's index). A job row is
-- rewritten three times (enqueued, claimed, completed) and each rewrite adds an entry to every
-- index whose predicate the new row satisfies: the full indexes took one entry per rewrite, the
-- split ones take one at the enqueue and one at the completion, and the claim writes to neither.
-- That took a third off the claim's row write and a sixth off the completion's (no-op pipeline,
-- docs/performance.md). Lists across states read each group in order and merge them
-- (packages/core/src/jobs/list-order.ts).
--
-- The predicates name the timestamps, not the status: the lists are Prisma queries, which compare
-- the status with a cast of a text parameter (`CAST($1::text AS job_status)`), and PostgreSQL
-- cannot prove a predicate on the status from that cast (the enum's input function is not
-- immutable), so a status predicate left every list to a scan of the table. A queued job has
-- neither started nor completed (a job put back in the queue has its start cleared), a finished
-- one has completed, and the lists filter on those as well as on the status.
--
-- The new indexes are built before the old ones go, so that lists never fall back to a scan
-- meanwhile. On a populated table each build holds off writes to job for its duration (about a
-- minute per index for ten million jobs on 2 cores): run it in a quiet moment.
CREATE INDEX "job_queued_workspace_id_created_at_id_idx" ON "job"("workspace_id", "created_at" DESC, "id" DESC)
  WHERE "started_at" IS NULL AND "completed_at" IS NULL;
CREATE INDEX "job_queued_workspace_id_script_path_created_at_id_idx" ON "job"("workspace_id", "script_path", "created_at" DESC, "id" DESC)
  WHERE "started_at" IS NULL AND "completed_at" IS NULL;
CREATE INDEX "job_completed_workspace_id_created_at_id_idx" ON "job"("workspace_id", "created_at" DESC, "id" DESC)
  WHERE "completed_at" IS NOT NULL;
CREATE INDEX "job_completed_workspace_id_script_path_created_at_id_idx" ON "job"("workspace_id", "script_path", "created_at" DESC, "id" DESC)
  WHERE "completed_at" IS NOT NULL;

DROP INDEX "job_workspace_id_created_at_id_idx";
DROP INDEX "job_workspace_id_script_path_created_at_idx";
DROP INDEX "job_finished_workspace_id_created_at_id_idx";
