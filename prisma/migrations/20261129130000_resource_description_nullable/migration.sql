-- AlterTable
ALTER TABLE "resource" ALTER COLUMN "description" DROP NOT NULL;

