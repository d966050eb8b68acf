-- AlterTable
ALTER TABLE "worker_ping" ADD COLUMN     "agent_token_id" UUID;

