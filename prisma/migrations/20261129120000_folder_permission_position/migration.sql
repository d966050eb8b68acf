-- AlterTable
ALTER TABLE "folder_permission" ADD COLUMN     "owner_extra" BOOLEAN,
ADD COLUMN     "position" INTEGER NOT NULL DEFAULT 0;
