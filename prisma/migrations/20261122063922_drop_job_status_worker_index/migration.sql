-- DropIndex
DROP INDEX "job_status_worker_name_idx";

