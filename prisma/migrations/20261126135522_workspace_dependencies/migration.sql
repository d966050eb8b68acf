-- CreateTable
CREATE TABLE "workspace_dependencies" (
    "id" SERIAL NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "language" TEXT NOT NULL,
    "name" TEXT,
    "description" TEXT,
    "content" TEXT NOT NULL,
    "archived" BOOLEAN NOT NULL DEFAULT false,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workspace_dependencies_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "workspace_dependencies_workspace_id_language_name_idx" ON "workspace_dependencies"("workspace_id", "language", "name");

