-- AlterTable
ALTER TABLE "workspace" ADD COLUMN     "parent_workspace_id" TEXT;

