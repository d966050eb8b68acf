import { Prefetch } from "@/server/trpc/prefetch";
import { WorkspaceHome } from "./home";

export default async function WorkspaceHomePage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  // The home's queries (home.tsx), started with the page.
  return (
    <Prefetch
      calls={[
        ["job.list", { workspace, per_page: "10" }],
        ["job.list", { workspace, success: "false", per_page: "5" }],
        ["schedule.list", { workspace }],
        ["worker.queueStats"],
      ]}
    >
      <WorkspaceHome workspace={workspace} />
    </Prefetch>
  );
}
