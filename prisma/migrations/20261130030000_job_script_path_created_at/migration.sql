-- A script's runs, newest first (issue 38): the new index is built before the old one goes, so
-- that listing a script's runs never falls back to a scan of the workspace's jobs meanwhile. On a
-- populated table the build holds off writes to job for its duration (4.6 s for 1.2 million
-- jobs on 2 cores, measured): run it in a quiet moment.
CREATE INDEX "job_workspace_id_script_path_created_at_idx" ON "job"("workspace_id", "script_path", "created_at" DESC);

DROP INDEX "job_workspace_id_script_path_idx";
