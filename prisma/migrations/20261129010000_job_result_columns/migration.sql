-- AlterTable
ALTER TABLE "job" ADD COLUMN     "result_columns" TEXT[] DEFAULT ARRAY[]::TEXT[];
