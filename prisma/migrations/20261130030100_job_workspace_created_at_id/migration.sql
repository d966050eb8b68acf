-- The runs list's whole order, created_at then id (issue 38). The new index is built before the
-- old one goes, so that listing runs never falls back to a scan meanwhile. On a populated table
-- the build holds off writes to job for its duration (63 s for 11 million jobs on 2 cores,
-- measured): run it in a quiet moment.
CREATE INDEX "job_workspace_id_created_at_id_idx" ON "job"("workspace_id", "created_at" DESC, "id" DESC);

DROP INDEX "job_workspace_id_created_at_idx";
