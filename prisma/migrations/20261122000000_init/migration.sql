-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "workspace_role" AS ENUM ('admin', 'developer', 'operator');

-- CreateEnum
CREATE TYPE "permission_level" AS ENUM ('owner', 'writer', 'viewer');

-- CreateEnum
CREATE TYPE "job_status" AS ENUM ('queued', 'running', 'success', 'failure', 'canceled');

-- CreateTable
CREATE TABLE "instance_setting" (
    "key" TEXT NOT NULL,
    "value" JSONB NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "instance_setting_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "user" (
    "id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "username" TEXT NOT NULL,
    "name" TEXT,
    "password_hash" TEXT,
    "is_super_admin" BOOLEAN NOT NULL DEFAULT false,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "user_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_token" (
    "id" UUID NOT NULL,
    "token_hash" TEXT NOT NULL,
    "token_prefix" TEXT NOT NULL,
    "label" TEXT,
    "kind" TEXT NOT NULL DEFAULT 'api',
    "user_id" UUID NOT NULL,
    "workspace_id" TEXT,
    "scope_path" TEXT,
    "expires_at" TIMESTAMP(3),
    "last_used_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "api_token_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workspace" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "workspace_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workspace_member" (
    "workspace_id" TEXT NOT NULL,
    "user_id" UUID NOT NULL,
    "role" "workspace_role" NOT NULL DEFAULT 'developer',
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workspace_member_pkey" PRIMARY KEY ("workspace_id","user_id")
);

-- CreateTable
CREATE TABLE "group" (
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "summary" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "group_pkey" PRIMARY KEY ("workspace_id","name")
);

-- CreateTable
CREATE TABLE "group_member" (
    "workspace_id" TEXT NOT NULL,
    "group_name" TEXT NOT NULL,
    "user_id" UUID NOT NULL,

    CONSTRAINT "group_member_pkey" PRIMARY KEY ("workspace_id","group_name","user_id")
);

-- CreateTable
CREATE TABLE "folder" (
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "summary" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "folder_pkey" PRIMARY KEY ("workspace_id","name")
);

-- CreateTable
CREATE TABLE "folder_permission" (
    "workspace_id" TEXT NOT NULL,
    "folder_name" TEXT NOT NULL,
    "principal" TEXT NOT NULL,
    "level" "permission_level" NOT NULL,

    CONSTRAINT "folder_permission_pkey" PRIMARY KEY ("workspace_id","folder_name","principal")
);

-- CreateTable
CREATE TABLE "script" (
    "workspace_id" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "parent_hash" TEXT,
    "summary" TEXT NOT NULL DEFAULT '',
    "description" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "language" TEXT NOT NULL,
    "schema" JSONB NOT NULL,
    "tag" TEXT,
    "lock" TEXT,
    "timeout_secs" INTEGER,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "archived" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "script_pkey" PRIMARY KEY ("workspace_id","hash")
);

-- CreateTable
CREATE TABLE "job" (
    "id" UUID NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL DEFAULT 'script',
    "script_path" TEXT,
    "script_hash" TEXT,
    "language" TEXT NOT NULL,
    "content" TEXT,
    "args" JSONB NOT NULL DEFAULT '{}',
    "arg_order" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "tag" TEXT NOT NULL,
    "priority" INTEGER NOT NULL DEFAULT 0,
    "status" "job_status" NOT NULL DEFAULT 'queued',
    "result" JSONB,
    "created_by" TEXT NOT NULL,
    "permissioned_as" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "scheduled_for" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMP(3),
    "completed_at" TIMESTAMP(3),
    "worker_name" TEXT,
    "timeout_secs" INTEGER,
    "parent_job_id" UUID,
    "root_job_id" UUID,
    "canceled_by" TEXT,
    "cancel_reason" TEXT,
    "boss_job_id" UUID,

    CONSTRAINT "job_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "job_log" (
    "job_id" UUID NOT NULL,
    "logs" TEXT NOT NULL DEFAULT '',

    CONSTRAINT "job_log_pkey" PRIMARY KEY ("job_id")
);

-- CreateTable
CREATE TABLE "worker_ping" (
    "name" TEXT NOT NULL,
    "worker_group" TEXT NOT NULL,
    "tags" TEXT[],
    "host" TEXT NOT NULL,
    "current_job_id" UUID,
    "jobs_executed" INTEGER NOT NULL DEFAULT 0,
    "memory_bytes" BIGINT,
    "started_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_ping_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "worker_ping_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "audit_log" (
    "id" BIGSERIAL NOT NULL,
    "workspace_id" TEXT,
    "actor" TEXT NOT NULL,
    "operation" TEXT NOT NULL,
    "resource" TEXT,
    "parameters" JSONB,
    "ip" TEXT,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "user_email_key" ON "user"("email");

-- CreateIndex
CREATE UNIQUE INDEX "user_username_key" ON "user"("username");

-- CreateIndex
CREATE UNIQUE INDEX "api_token_token_hash_key" ON "api_token"("token_hash");

-- CreateIndex
CREATE INDEX "api_token_user_id_idx" ON "api_token"("user_id");

-- CreateIndex
CREATE INDEX "workspace_member_user_id_idx" ON "workspace_member"("user_id");

-- CreateIndex
CREATE INDEX "script_workspace_id_path_created_at_idx" ON "script"("workspace_id", "path", "created_at" DESC);

-- CreateIndex
CREATE INDEX "job_workspace_id_created_at_idx" ON "job"("workspace_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "job_workspace_id_script_path_idx" ON "job"("workspace_id", "script_path");

-- CreateIndex
CREATE INDEX "job_status_tag_idx" ON "job"("status", "tag");

-- CreateIndex
CREATE INDEX "audit_log_workspace_id_at_idx" ON "audit_log"("workspace_id", "at" DESC);

-- AddForeignKey
ALTER TABLE "api_token" ADD CONSTRAINT "api_token_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_member" ADD CONSTRAINT "workspace_member_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_member" ADD CONSTRAINT "workspace_member_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "group" ADD CONSTRAINT "group_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "group_member" ADD CONSTRAINT "group_member_workspace_id_group_name_fkey" FOREIGN KEY ("workspace_id", "group_name") REFERENCES "group"("workspace_id", "name") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "group_member" ADD CONSTRAINT "group_member_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "folder" ADD CONSTRAINT "folder_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "folder_permission" ADD CONSTRAINT "folder_permission_workspace_id_folder_name_fkey" FOREIGN KEY ("workspace_id", "folder_name") REFERENCES "folder"("workspace_id", "name") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "script" ADD CONSTRAINT "script_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "job_log" ADD CONSTRAINT "job_log_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "job"("id") ON DELETE CASCADE ON UPDATE CASCADE;

