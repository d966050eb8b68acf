import type { JobStatus, Pool, Prisma } from "@millrace/db";

export const FINISHED_STATUSES = ["success", "failure", "canceled"] as const satisfies readonly JobStatus[];

/**
 * Job statuses grouped by the index that keeps them in the runs lists' order, created_at then id
 * (prisma/partial-indexes.sql): queued jobs have one, finished jobs another, and running jobs, a
 * few per worker slot, come from the queue's index. No index holds every status in that order:
 * the claim (queued to running) would add an entry to it, a third of the claim's row write.
 */
const STATUS_GROUPS: readonly (readonly JobStatus[])[] = [["queued"], ["running"], FINISHED_STATUSES];

// Above this many running jobs in the listed workspaces (one per busy worker slot, or left by a
// lost worker until the zombie monitor puts them back) the running group is read without their ids,
// by a scan of the table. 18,000 ids still answered a list in 120-190 ms beside 11M jobs.
const MAX_RUNNING_IDS = 20_000;

/**
 * The page `skip`..`skip + take` of the jobs of `workspaceId` (null: every workspace) whose status
 * is in `statuses`, in the runs lists' order (`direction` on created_at, then id). `find` reads
 * one status group's jobs (the `where` it is given added to the caller's own filters) in that
 * order; across groups, each group's first `skip + take` jobs are merged. created_at has
 * millisecond precision (timestamp(3)), as the Date it is read into: comparing them here orders
 * jobs as PostgreSQL does.
 *
 * Each group's `where` lets PostgreSQL read it from its index. Prisma compares the status with a
 * cast of a text parameter, from which PostgreSQL cannot prove an index's predicate on the status:
 * the queued and finished indexes' predicates name the timestamps instead (a queued job has
 * neither started nor completed, a finished one has completed), and running jobs are looked up
 * first by status, in SQL, through the queue's index, and then read by id.
 */
export async function findInListOrder<T extends { createdAt: Date; id: string }>(
  pool: Pool,
  workspaceId: string | null,
  statuses: ReadonlySet<JobStatus>,
  direction: "asc" | "desc",
  page: { skip: number; take: number },
  find: (where: Prisma.JobWhereInput, page: { skip: number; take: number }) => Promise<T[]>,
): Promise<T[]> {
  const groups = STATUS_GROUPS.map((group) => group.filter((status) => statuses.has(status))).filter(
    (group) => group.length > 0,
  );
  const whereOf = async (group: readonly JobStatus[]): Promise<Prisma.JobWhereInput> => {
    const status = group.length === 1 ? group[0] : { in: [...group] };
    if (group[0] === "queued") return { status, startedAt: null, completedAt: null };
    if (group[0] !== "running") return { status, completedAt: { not: null } };
    const { rows } = await pool.query<{ id: string }>(
      workspaceId === null
        ? "SELECT id FROM job WHERE status = 'running' LIMIT $1"
        : "SELECT id FROM job WHERE status = 'running' AND workspace_id = $2 LIMIT $1",
      workspaceId === null ? [MAX_RUNNING_IDS + 1] : [MAX_RUNNING_IDS + 1, workspaceId],
    );
    return rows.length > MAX_RUNNING_IDS ? { status } : { status, id: { in: rows.map((row) => row.id) } };
  };
  if (groups.length === 0) return [];
  if (groups.length === 1) return find(await whereOf(groups[0]!), page);
  const lists = await Promise.all(
    groups.map(async (group) => find(await whereOf(group), { skip: 0, take: page.skip + page.take })),
  );
  const sign = direction === "desc" ? -1 : 1;
  const before = (a: T, b: T) => {
    const time = a.createdAt.getTime() - b.createdAt.getTime();
    return sign * (time !== 0 ? time : a.id < b.id ? -1 : a.id > b.id ? 1 : 0) < 0;
  };
  const merged: T[] = [];
  const heads = lists.map(() => 0);
  while (merged.length < page.skip + page.take) {
    let next = -1;
    lists.forEach((list, i) => {
      const head = list[heads[i]!];
      if (head && (next < 0 || before(head, lists[next]![heads[next]!]!))) next = i;
    });
    if (next < 0) break;
    merged.push(lists[next]![heads[next]!++]!);
  }
  return merged.slice(page.skip);
}
