-- AlterTable
ALTER TABLE "workspace" ADD COLUMN     "large_file_storage" JSONB;

