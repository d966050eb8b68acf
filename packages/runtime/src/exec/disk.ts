import { chmodSync, lstatSync, readdirSync, readlinkSync, statSync, type Stats } from "node:fs";
import path from "node:path";
import { onSampleTick, sampleDue } from "./sample-tick.ts";

/** What a job may keep on disk (see JobLimits.maxDiskBytes and maxFileBytes). */
export interface DiskLimits {
  /** The job folder: its only writable place on a disk (in the sandbox /tmp and /dev/shm are tmpfs). */
  dir: string;
  /** Bytes (allocated blocks) the folder may hold, files deleted but still open included. */
  maxBytes: number;
  /** RLIMIT_FSIZE: a file this size has reached the limit (a write past it failed). */
  maxFileBytes: number;
}

export interface DiskSample {
  /** Allocated bytes of the folder's entries (hard links once), plus deleted files still open. */
  bytes: number;
  entries: number;
  /** A file of the folder has reached the file-size limit. */
  fileAtLimit: boolean;
  /** False when the walk stopped at `maxEntries`. */
  complete: boolean;
}

/**
 * How often a running job's folder is measured, at least; a walk that took T ms waits 20 T before
 * the next one (≤ 5 % of a core for a job that made a huge tree: 10,000 files take ~50 ms). A job
 * writing as fast as this VM's disk takes (~550 MB/s) overshoots its quota by ~55 MB before it is
 * killed. A measure of a typical job (its few files, the open files of its ~3 processes) costs
 * ~130 µs here: ~0.13 % of a core per running job.
 */
export const DISK_SAMPLE_MS = 100;
const SAMPLE_COST_FACTOR = 20;
/** The last measure, after the run, stops there (≈ 20–40 ms of the worker's time): the samples saw the rest. */
export const FINAL_SCAN_MAX_ENTRIES = 20_000;

function blocksOf(stat: Stats): number {
  return stat.blocks * 512;
}

/**
 * Reads a folder of the job; one the job made unreadable to the worker's user (a worker that is
 * not root runs jobs as itself, see jobUser) is given back its owner's read and search bits.
 */
function readFolder(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EACCES") return [];
    try {
      chmodSync(dir, 0o700);
      return readdirSync(dir);
    } catch {
      return [];
    }
  }
}

/**
 * Measures a job folder: allocated blocks of every entry (sparse files count what they hold, hard
 * links count once), and whether a file has reached the file-size limit. Synchronous: ~3 µs per
 * entry and ~12 µs per folder on a 2-core VM, ~35 µs for a typical job's few files.
 */
export function sampleDir(limits: DiskLimits, maxEntries = Infinity, seen = new Set<number>()): DiskSample {
  const sample: DiskSample = { bytes: 0, entries: 0, fileAtLimit: false, complete: true };
  let root: Stats;
  try {
    root = lstatSync(limits.dir);
  } catch {
    return sample;
  }
  sample.bytes += blocksOf(root);
  const stack = [limits.dir];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    for (const name of readFolder(dir)) {
      if (sample.entries >= maxEntries) {
        sample.complete = false;
        return sample;
      }
      sample.entries++;
      const file = path.join(dir, name);
      let stat: Stats;
      try {
        stat = lstatSync(file);
      } catch {
        continue;
      }
      if (stat.isDirectory()) stack.push(file);
      else if (stat.isFile() && stat.size >= limits.maxFileBytes) sample.fileAtLimit = true;
      if (stat.nlink > 1 && !stat.isDirectory()) {
        if (seen.has(stat.ino)) continue;
        seen.add(stat.ino);
      }
      sample.bytes += blocksOf(stat);
    }
  }
  return sample;
}

/**
 * Bytes of files deleted from the folder's filesystem that the processes still hold open (a job
 * could otherwise fill the disk with files no walk finds). `seen`: inodes already counted.
 */
export function openDeletedBytes(pids: number[], device: number, seen: Set<number>): number {
  let bytes = 0;
  for (const pid of pids) {
    const fdDir = `/proc/${pid}/fd`;
    let fds: string[];
    try {
      fds = readdirSync(fdDir);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (!readlinkSync(`${fdDir}/${fd}`).endsWith(" (deleted)")) continue;
        const stat = statSync(`${fdDir}/${fd}`);
        if (stat.dev !== device || stat.nlink !== 0 || !stat.isFile() || seen.has(stat.ino)) continue;
        seen.add(stat.ino);
        bytes += blocksOf(stat);
      } catch {
        // closed or gone meanwhile
      }
    }
  }
  return bytes;
}

export type DiskVerdict = "quota" | "fileSize" | null;

function verdict(sample: DiskSample, maxBytes: number): DiskVerdict {
  if (sample.fileAtLimit) return "fileSize";
  return sample.bytes > maxBytes ? "quota" : null;
}

// More than a job writes (~10 GB/s; this VM's disk takes ~550 MB/s): see finalDiskCheck.
const MAX_WRITE_BYTES_PER_MS = 10 * 1024 * 1024;

/**
 * The job folder after a run of `ranMs`: a file at the size limit, or more than the quota. A job
 * that ended before the first sample and too soon to have written up to a limit is not measured
 * (~35 µs saved on a short job's path, e.g. the default 1 GiB limits take over 100 ms to reach).
 */
export function finalDiskCheck(limits: DiskLimits, ranMs: number): DiskVerdict {
  const soonest = Math.min(limits.maxBytes, limits.maxFileBytes) / MAX_WRITE_BYTES_PER_MS;
  if (ranMs < Math.min(DISK_SAMPLE_MS, soonest)) return null;
  return verdict(sampleDir(limits, FINAL_SCAN_MAX_ENTRIES), limits.maxBytes);
}

/**
 * Measures a running job's folder (and the deleted files its processes hold open) now and then,
 * and calls `exceeded` once when it holds more than its quota or a file at the size limit.
 * `pids`: the job's processes now.
 */
export function watchDisk(
  limits: DiskLimits,
  pids: () => number[],
  exceeded: (why: Exclude<DiskVerdict, null>) => void,
): { stop(): void } {
  let stopped = false;
  let device: number | null = null;
  // The first measure a DISK_SAMPLE_MS into the run, then at the pace the walks allow.
  let dueAt = performance.now() + DISK_SAMPLE_MS;
  const stopTicks = onSampleTick((now) => {
    if (stopped || !sampleDue(now, dueAt)) return;
    const started = performance.now();
    const seen = new Set<number>();
    const sample = sampleDir(limits, Infinity, seen);
    try {
      device ??= statSync(limits.dir).dev;
      sample.bytes += openDeletedBytes(pids(), device, seen);
    } catch {
      // the folder is gone: the job is over
    }
    const why = verdict(sample, limits.maxBytes);
    if (why) {
      stop();
      exceeded(why);
      return;
    }
    const cost = performance.now() - started;
    dueAt = started + Math.max(DISK_SAMPLE_MS, cost * SAMPLE_COST_FACTOR);
  });
  const stop = (): void => {
    stopped = true;
    stopTicks();
  };
  return { stop };
}
