-- CreateTable
CREATE TABLE "instance_alert" (
    "id" BIGSERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "raised_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "cleared_at" TIMESTAMPTZ(3),
    "recovery" TEXT,

    CONSTRAINT "instance_alert_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "instance_alert_raised_at_idx" ON "instance_alert"("raised_at" DESC);

-- An alert is raised once: at most one open row per key (not expressible in Prisma's schema).
CREATE UNIQUE INDEX "instance_alert_open_key" ON "instance_alert"("key") WHERE "cleared_at" IS NULL;
