-- AlterTable
ALTER TABLE "variable" ADD COLUMN     "file_fields" JSONB;
