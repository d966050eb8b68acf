-- AlterTable
ALTER TABLE "script" ADD COLUMN     "arg_customizations" JSONB,
ADD COLUMN     "dedicated_worker" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "draft" (
    "workspace_id" TEXT NOT NULL,
    "user_id" UUID NOT NULL,
    "path" TEXT NOT NULL,
    "value" JSONB NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "draft_pkey" PRIMARY KEY ("workspace_id","user_id","path")
);

-- AddForeignKey
ALTER TABLE "draft" ADD CONSTRAINT "draft_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "draft" ADD CONSTRAINT "draft_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

