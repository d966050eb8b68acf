import { JobView } from "@/components/job-view";
import { Prefetch } from "@/server/trpc/prefetch";

export default async function RunPage({ params }: { params: Promise<{ workspace: string; id: string }> }) {
  const { workspace, id } = await params;
  // The run as the view first asks for it (with the live stream, logs come from the stream).
  return (
    <Prefetch calls={[["job.get", { workspace, id, withLogs: false }]]}>
      <JobView workspace={workspace} id={id} />
    </Prefetch>
  );
}
