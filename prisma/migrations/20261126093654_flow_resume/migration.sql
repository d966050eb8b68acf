-- CreateTable
CREATE TABLE "flow_resume" (
    "id" BIGSERIAL NOT NULL,
    "job_id" UUID NOT NULL,
    "flow_job_id" UUID NOT NULL,
    "resume_id" BIGINT NOT NULL,
    "approver" TEXT NOT NULL,
    "value" JSONB,
    "is_cancel" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "flow_resume_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "flow_resume_flow_job_id_idx" ON "flow_resume"("flow_job_id");

-- CreateIndex
CREATE UNIQUE INDEX "flow_resume_job_id_resume_id_key" ON "flow_resume"("job_id", "resume_id");

-- AddForeignKey
ALTER TABLE "flow_resume" ADD CONSTRAINT "flow_resume_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "job"("id") ON DELETE CASCADE ON UPDATE CASCADE;

