-- AlterTable
ALTER TABLE "flow" ADD COLUMN     "ws_error_handler_muted" BOOLEAN;

