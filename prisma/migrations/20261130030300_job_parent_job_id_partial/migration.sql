-- A flow's steps and a job's children by parent: only those jobs have a parent, yet every job row
-- version (enqueued, claimed, completed) added an entry, a null one for most jobs. Partial, a plain
-- job writes none. Equality on parent_job_id implies it is not null, so lookups still use it. On a
-- populated table the build holds off writes to job for its duration: run it when quiet.
DROP INDEX "job_parent_job_id_idx";
CREATE INDEX "job_parent_job_id_idx" ON "job"("parent_job_id") WHERE "parent_job_id" IS NOT NULL;
