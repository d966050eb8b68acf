-- DropIndex
DROP INDEX "job_status_tag_idx";

-- AlterTable
ALTER TABLE "script" ADD COLUMN     "concurrency_key" TEXT,
ADD COLUMN     "concurrency_time_window_s" INTEGER,
ADD COLUMN     "concurrent_limit" INTEGER,
ADD COLUMN     "memory_limit_mb" INTEGER,
ADD COLUMN     "priority" INTEGER,
ADD COLUMN     "retry" JSONB;

-- AlterTable
ALTER TABLE "job" ADD COLUMN     "concurrency_key" TEXT,
ADD COLUMN     "concurrency_time_window_s" INTEGER,
ADD COLUMN     "concurrent_limit" INTEGER,
ADD COLUMN     "memory_limit_mb" INTEGER,
ADD COLUMN     "retry" JSONB,
ADD COLUMN     "retry_attempt" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "zombie_restarts" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "worker_ping" ADD COLUMN     "occupancy_15s" DOUBLE PRECISION,
ADD COLUMN     "occupancy_30m" DOUBLE PRECISION,
ADD COLUMN     "occupancy_5m" DOUBLE PRECISION,
ADD COLUMN     "version" TEXT;

-- CreateTable
CREATE TABLE "worker_group_config" (
    "name" TEXT NOT NULL,
    "config" JSONB NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "worker_group_config_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "job_status_tag_priority_scheduled_for_idx" ON "job"("status", "tag", "priority" DESC, "scheduled_for");

-- CreateIndex
CREATE INDEX "job_concurrency_key_started_at_idx" ON "job"("concurrency_key", "started_at");

-- CreateIndex
CREATE INDEX "job_status_worker_name_idx" ON "job"("status", "worker_name");

-- CreateIndex
CREATE INDEX "job_completed_at_idx" ON "job"("completed_at");

