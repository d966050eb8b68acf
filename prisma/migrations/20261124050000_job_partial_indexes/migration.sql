-- The job table's queue, retention, concurrency and schedule indexes become partial (see
-- prisma/partial-indexes.sql, repeated here as a migration is a snapshot).
DROP INDEX "job_status_tag_priority_scheduled_for_idx";
DROP INDEX "job_completed_at_idx";
DROP INDEX "job_concurrency_key_started_at_idx";
DROP INDEX "job_workspace_id_schedule_path_created_at_idx";

CREATE INDEX "job_status_tag_priority_scheduled_for_idx" ON "job"("status", "tag", "priority" DESC, "scheduled_for")
  WHERE "status" IN ('queued', 'running');

CREATE INDEX "job_completed_at_idx" ON "job"("completed_at") WHERE "completed_at" IS NOT NULL;

CREATE INDEX "job_concurrency_key_started_at_idx" ON "job"("concurrency_key", "started_at")
  WHERE "concurrency_key" IS NOT NULL;

CREATE INDEX "job_workspace_id_schedule_path_created_at_idx" ON "job"("workspace_id", "schedule_path", "created_at" DESC)
  WHERE "schedule_path" IS NOT NULL;
