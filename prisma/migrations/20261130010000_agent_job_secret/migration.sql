-- CreateTable
CREATE TABLE "agent_job_secret" (
    "id" BIGSERIAL NOT NULL,
    "job_id" UUID NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "agent_job_secret_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "agent_job_secret_job_id_idx" ON "agent_job_secret"("job_id");

-- AddForeignKey
ALTER TABLE "agent_job_secret" ADD CONSTRAINT "agent_job_secret_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "job"("id") ON DELETE CASCADE ON UPDATE CASCADE;

