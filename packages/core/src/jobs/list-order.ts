import type { JobStatus, Prisma } from "@millrace/db";

export const FINISHED_STATUSES = ["success", "failure", "canceled"] as const satisfies readonly JobStatus[];

/**
 * Job statuses grouped by the index that keeps them in the runs lists' order, created_at then id
 * (prisma/partial-indexes.sql): queued jobs have one, finished jobs another, and running jobs, a
 * few per worker slot, come from the queue's index. No index holds every status in that order:
 * the claim (queued to running) would add an entry to it, a third of the claim's row write.
 */
const STATUS_GROUPS: readonly (readonly JobStatus[])[] = [["queued"], ["running"], FINISHED_STATUSES];

/**
 * The page `skip`..`skip + take` of the jobs whose status is in `statuses`, in the runs lists'
 * order (`direction` on created_at, then id). `find` reads one status group's jobs (its
 * `status` filter added to the caller's own) in that order, so that each group is read from its
 * own index; across groups, each group's first `skip + take` jobs are merged. created_at has
 * millisecond precision (timestamp(3)), as the Date it is read into: comparing them here orders
 * jobs as PostgreSQL does.
 */
export async function findInListOrder<T extends { createdAt: Date; id: string }>(
  statuses: ReadonlySet<JobStatus>,
  direction: "asc" | "desc",
  page: { skip: number; take: number },
  find: (status: Prisma.JobWhereInput, page: { skip: number; take: number }) => Promise<T[]>,
): Promise<T[]> {
  const groups = STATUS_GROUPS.map((group) => group.filter((status) => statuses.has(status))).filter(
    (group) => group.length > 0,
  );
  const statusOf = (group: readonly JobStatus[]): Prisma.JobWhereInput => ({
    status: group.length === 1 ? group[0] : { in: [...group] },
  });
  if (groups.length === 0) return [];
  if (groups.length === 1) return find(statusOf(groups[0]!), page);
  const lists = await Promise.all(
    groups.map((group) => find(statusOf(group), { skip: 0, take: page.skip + page.take })),
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
