-- Lists of finished jobs (success=true or false), newest first, without reading past the queued
-- and running jobs of the workspace (718 ms behind 100,000 queued, issue 38). Enqueueing and
-- claiming do not write to it, a completion adds one entry. On a populated table the build holds
-- off writes to job for its duration (about a minute for ten million jobs): run it when quiet.
CREATE INDEX "job_finished_workspace_id_created_at_id_idx" ON "job"("workspace_id", "created_at" DESC, "id" DESC)
  WHERE "status" IN ('success', 'failure', 'canceled');
