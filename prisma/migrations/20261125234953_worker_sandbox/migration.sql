-- AlterTable
ALTER TABLE "worker_ping" ADD COLUMN     "sandbox" TEXT;

