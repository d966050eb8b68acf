-- AlterTable
ALTER TABLE "job" ADD COLUMN     "progress" SMALLINT;

