-- AlterTable
ALTER TABLE "job" ADD COLUMN     "flow_status" JSONB,
ADD COLUMN     "flow_step_id" TEXT,
ADD COLUMN     "raw_flow" JSONB;

-- CreateTable
CREATE TABLE "flow" (
    "workspace_id" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "summary" TEXT NOT NULL DEFAULT '',
    "description" TEXT NOT NULL DEFAULT '',
    "value" JSONB NOT NULL,
    "schema" JSONB,
    "archived" BOOLEAN NOT NULL DEFAULT false,
    "version_id" BIGINT NOT NULL,
    "edited_by" TEXT NOT NULL,
    "edited_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "flow_pkey" PRIMARY KEY ("workspace_id","path")
);

-- CreateTable
CREATE TABLE "flow_version" (
    "id" BIGSERIAL NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "summary" TEXT NOT NULL DEFAULT '',
    "description" TEXT NOT NULL DEFAULT '',
    "value" JSONB NOT NULL,
    "schema" JSONB,
    "deployment_msg" TEXT,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "flow_version_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "flow_version_workspace_id_path_id_idx" ON "flow_version"("workspace_id", "path", "id" DESC);

-- CreateIndex
CREATE INDEX "job_parent_job_id_idx" ON "job"("parent_job_id");

-- AddForeignKey
ALTER TABLE "flow" ADD CONSTRAINT "flow_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

