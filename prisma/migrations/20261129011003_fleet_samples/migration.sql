-- CreateTable
CREATE TABLE "queue_sample" (
    "at" TIMESTAMPTZ(3) NOT NULL,
    "tag" TEXT NOT NULL,
    "queued" INTEGER NOT NULL,
    "scheduled" INTEGER NOT NULL,
    "running" INTEGER NOT NULL,
    "oldest_wait_secs" DOUBLE PRECISION NOT NULL,
    "workers" INTEGER NOT NULL,

    CONSTRAINT "queue_sample_pkey" PRIMARY KEY ("at","tag")
);

-- CreateTable
CREATE TABLE "worker_group_sample" (
    "at" TIMESTAMPTZ(3) NOT NULL,
    "worker_group" TEXT NOT NULL,
    "alive" INTEGER NOT NULL,
    "busy" INTEGER NOT NULL,
    "occupancy_15s" DOUBLE PRECISION,
    "occupancy_5m" DOUBLE PRECISION,
    "occupancy_30m" DOUBLE PRECISION,

    CONSTRAINT "worker_group_sample_pkey" PRIMARY KEY ("at","worker_group")
);

