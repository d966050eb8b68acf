-- CreateTable
CREATE TABLE "autoscaling_state" (
    "worker_group" TEXT NOT NULL,
    "desired" INTEGER NOT NULL,
    "last_change_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "error" TEXT,

    CONSTRAINT "autoscaling_state_pkey" PRIMARY KEY ("worker_group")
);

-- CreateTable
CREATE TABLE "autoscaling_event" (
    "id" BIGSERIAL NOT NULL,
    "worker_group" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "from_workers" INTEGER NOT NULL,
    "to_workers" INTEGER NOT NULL,
    "reason" TEXT NOT NULL,
    "integration" TEXT NOT NULL,
    "error" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "autoscaling_event_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "autoscaling_event_worker_group_at_idx" ON "autoscaling_event"("worker_group", "at" DESC);

-- CreateIndex
CREATE INDEX "autoscaling_event_at_idx" ON "autoscaling_event"("at");

