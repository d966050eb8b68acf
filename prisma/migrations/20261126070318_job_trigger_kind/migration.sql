-- AlterTable
ALTER TABLE "job" ADD COLUMN     "trigger_kind" TEXT;

