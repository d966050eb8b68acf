-- AlterTable
ALTER TABLE "script" ADD COLUMN     "declared_schema" JSONB;

