-- AlterTable
ALTER TABLE "folder_permission" ADD COLUMN     "position" INTEGER NOT NULL DEFAULT 0;
