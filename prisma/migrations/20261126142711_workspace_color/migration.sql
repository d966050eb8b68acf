-- AlterTable
ALTER TABLE "workspace" ADD COLUMN     "color" TEXT;

