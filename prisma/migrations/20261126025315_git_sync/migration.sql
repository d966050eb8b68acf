-- CreateTable
CREATE TABLE "git_sync_config" (
    "workspace_id" TEXT NOT NULL,
    "remote_url" TEXT NOT NULL,
    "branch" TEXT NOT NULL DEFAULT 'main',
    "username" TEXT,
    "secret" TEXT,
    "include_kinds" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "include_instance_config" BOOLEAN NOT NULL DEFAULT false,
    "include_password_hashes" BOOLEAN NOT NULL DEFAULT false,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "synced_audit_id" BIGINT NOT NULL DEFAULT 0,
    "last_commit" TEXT,
    "last_commit_at" TIMESTAMP(3),
    "last_error" TEXT,
    "last_error_at" TIMESTAMP(3),
    "conflict_paths" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "failures" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sync_requested_at" TIMESTAMP(3),
    "last_reconcile_at" TIMESTAMP(3),
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "git_sync_config_pkey" PRIMARY KEY ("workspace_id")
);

-- CreateTable
CREATE TABLE "git_sync_run" (
    "id" BIGSERIAL NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "trigger" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "started_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMP(3),
    "commits" INTEGER NOT NULL DEFAULT 0,
    "head" TEXT,
    "error" TEXT,
    "conflict_paths" TEXT[] DEFAULT ARRAY[]::TEXT[],

    CONSTRAINT "git_sync_run_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "git_sync_run_workspace_id_started_at_idx" ON "git_sync_run"("workspace_id", "started_at" DESC);

