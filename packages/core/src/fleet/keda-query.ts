// The query KEDA's `postgresql` scaler runs for a worker group (deploy/helm/millrace renders it into
// each group's ScaledObject; docs/kubernetes.md documents it). KEDA sets a Deployment's replicas to
// ceil(value / targetQueryValue), bounded by maxReplicaCount, so the query answers "how many jobs
// are waiting for this group's tags" and nothing more.
//
// Waiting means: queued and due (a job scheduled for later is no load yet). Running jobs are not
// counted: they already hold a worker, and counting them would keep the group from scaling in.
//
// The count stops at `cap`: KEDA cannot use a value above maxReplicaCount × targetQueryValue, and
// counting a million-row backlog to the end costs tens of milliseconds on every poll of every
// group, while a capped count reads at most `cap` entries of the queue index
// (job_status_tag_priority_scheduled_for_idx, prisma/partial-indexes.sql) whatever the backlog.
import { z } from "zod";

const TAG = /^[A-Za-z0-9_.-]{1,64}$/;

export const kedaQueryInput = z.object({
  tags: z
    .array(z.string().regex(TAG, "is not a tag (1-64 letters, digits, _ . or -)"))
    .min(1, "list at least one tag")
    .max(200),
  /** Stop counting here; the chart passes maxReplicaCount × targetQueryValue. */
  cap: z.number().int().min(1).max(100_000_000).optional(),
});

export type KedaQueryInput = z.input<typeof kedaQueryInput>;

/**
 * The SQL of a group's waiting jobs, one column (`waiting`), no parameters: KEDA's postgresql
 * trigger takes a literal query. Tags are validated (letters, digits, `_ . -`), so quoting them as
 * literals cannot break out of the string.
 */
export function renderKedaQuery(input: KedaQueryInput): string {
  const { tags, cap } = kedaQueryInput.parse(input);
  const list = [...new Set(tags)]
    .sort()
    .map((tag) => `'${tag}'`)
    .join(", ");
  const where = `status = 'queued' AND tag IN (${list}) AND scheduled_for <= now()`;
  if (cap === undefined) return `SELECT count(*) AS waiting FROM job WHERE ${where}`;
  return `SELECT count(*) AS waiting FROM (SELECT 1 FROM job WHERE ${where} LIMIT ${cap}) AS w`;
}
