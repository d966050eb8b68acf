-- Partial indexes, which Prisma 6's schema cannot express: prisma/schema.prisma leaves them out,
-- the migrations create them, and `npm run check` (scripts/lib/migration-diff.ts) applies this
-- file to the database it builds from the schema, so the two must still agree.
--
-- Why partial: a job row is rewritten three times (enqueued, claimed, completed), and each
-- rewrite changes an indexed column, so it adds an entry to every index of the table whose
-- predicate the new row satisfies. Indexing only the rows a query can want (queued and running
-- jobs for the queue; finished ones for retention; jobs with a concurrency key or a schedule)
-- cut PostgreSQL's CPU per job by about a third in the no-op throughput benchmark.

-- The queue: next due tag, queue counts, zombie and orphan checks (queued and running jobs only).
CREATE INDEX "job_status_tag_priority_scheduled_for_idx" ON "job"("status", "tag", "priority" DESC, "scheduled_for")
  WHERE "status" IN ('queued', 'running');

-- The runs lists' order (created_at, then id: jobs enqueued by one statement share created_at),
-- for queued jobs and for finished ones, by workspace and by script path. Running jobs, a few per
-- worker slot, come from the queue's index: the claim (queued to running) adds an entry to none of
-- these. A list across states reads each group in order and merges them (jobs/list-order.ts); a
-- list of finished jobs never reads past the queue. The predicates name the timestamps: the lists
-- are Prisma queries, whose cast of the status (`CAST($1::text AS job_status)`) PostgreSQL cannot
-- match with a predicate on the status.
CREATE INDEX "job_queued_workspace_id_created_at_id_idx" ON "job"("workspace_id", "created_at" DESC, "id" DESC)
  WHERE "started_at" IS NULL AND "completed_at" IS NULL;
CREATE INDEX "job_queued_workspace_id_script_path_created_at_id_idx" ON "job"("workspace_id", "script_path", "created_at" DESC, "id" DESC)
  WHERE "started_at" IS NULL AND "completed_at" IS NULL;
CREATE INDEX "job_completed_workspace_id_created_at_id_idx" ON "job"("workspace_id", "created_at" DESC, "id" DESC)
  WHERE "completed_at" IS NOT NULL;
CREATE INDEX "job_completed_workspace_id_script_path_created_at_id_idx" ON "job"("workspace_id", "script_path", "created_at" DESC, "id" DESC)
  WHERE "completed_at" IS NOT NULL;

-- Retention deletes finished jobs by age.
CREATE INDEX "job_completed_at_idx" ON "job"("completed_at") WHERE "completed_at" IS NOT NULL;

-- Concurrency limits count the running and recent jobs of one key.
CREATE INDEX "job_concurrency_key_started_at_idx" ON "job"("concurrency_key", "started_at")
  WHERE "concurrency_key" IS NOT NULL;

-- A schedule's last runs.
CREATE INDEX "job_workspace_id_schedule_path_created_at_idx" ON "job"("workspace_id", "schedule_path", "created_at" DESC)
  WHERE "schedule_path" IS NOT NULL;

-- A flow's steps and a job's children (most jobs have no parent).
CREATE INDEX "job_parent_job_id_idx" ON "job"("parent_job_id") WHERE "parent_job_id" IS NOT NULL;

-- An instance alert is raised once: at most one open row per key (fleet/alerts.ts).
CREATE UNIQUE INDEX "instance_alert_open_key" ON "instance_alert"("key") WHERE "cleared_at" IS NULL;
