-- AlterTable
ALTER TABLE "api_token" ADD COLUMN     "bounded_by" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- AlterTable
ALTER TABLE "job" ADD COLUMN     "bounded_by" TEXT[] DEFAULT ARRAY[]::TEXT[];

