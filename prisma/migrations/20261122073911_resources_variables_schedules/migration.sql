-- AlterTable
ALTER TABLE "script" ADD COLUMN     "lock_error" TEXT;

-- AlterTable
ALTER TABLE "job" ADD COLUMN     "lock" TEXT,
ADD COLUMN     "schedule_path" TEXT;

-- CreateTable
CREATE TABLE "workspace_key" (
    "workspace_id" TEXT NOT NULL,
    "wrapped_key" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workspace_key_pkey" PRIMARY KEY ("workspace_id")
);

-- CreateTable
CREATE TABLE "variable" (
    "workspace_id" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "is_secret" BOOLEAN NOT NULL DEFAULT false,
    "description" TEXT NOT NULL DEFAULT '',
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "variable_pkey" PRIMARY KEY ("workspace_id","path")
);

-- CreateTable
CREATE TABLE "resource_type" (
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "schema" JSONB NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "resource_type_pkey" PRIMARY KEY ("workspace_id","name")
);

-- CreateTable
CREATE TABLE "resource" (
    "workspace_id" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "resource_type" TEXT NOT NULL,
    "value" JSONB NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "resource_pkey" PRIMARY KEY ("workspace_id","path")
);

-- CreateTable
CREATE TABLE "schedule" (
    "workspace_id" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "schedule" TEXT NOT NULL,
    "timezone" TEXT NOT NULL DEFAULT 'UTC',
    "script_path" TEXT NOT NULL,
    "is_flow" BOOLEAN NOT NULL DEFAULT false,
    "args" JSONB NOT NULL DEFAULT '{}',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "summary" TEXT NOT NULL DEFAULT '',
    "next_run_at" TIMESTAMP(3),
    "last_run_at" TIMESTAMP(3),
    "error" TEXT,
    "created_by" TEXT NOT NULL,
    "permissioned_as" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "schedule_pkey" PRIMARY KEY ("workspace_id","path")
);

-- CreateTable
CREATE TABLE "rate_limit" (
    "key" TEXT NOT NULL,
    "count" INTEGER NOT NULL,
    "window_start" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "rate_limit_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "schedule_enabled_next_run_at_idx" ON "schedule"("enabled", "next_run_at");

-- CreateIndex
CREATE INDEX "job_workspace_id_schedule_path_created_at_idx" ON "job"("workspace_id", "schedule_path", "created_at" DESC);

-- CreateIndex
CREATE INDEX "audit_log_at_idx" ON "audit_log"("at");

