import { JobView } from "@/components/job-view";

export default async function RunPage({ params }: { params: Promise<{ workspace: string; id: string }> }) {
  const { workspace, id } = await params;
  return <JobView workspace={workspace} id={id} />;
}
