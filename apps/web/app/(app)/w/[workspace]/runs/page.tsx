import { Prefetch, type PrefetchCall } from "@/server/trpc/prefetch";
import { RunsPage } from "./runs-page";

export default async function RunsRoute({
  params,
  searchParams,
}: {
  params: Promise<{ workspace: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { workspace } = await params;
  // The unfiltered list (runs-page.tsx asks for exactly this without filters in the URL) starts
  // with the page; a filtered one is asked for by the browser.
  const unfiltered = Object.keys(await searchParams).length === 0;
  const calls: PrefetchCall[] = unfiltered ? [["job.list", { workspace }]] : [];
  return (
    <Prefetch calls={calls}>
      <RunsPage workspace={workspace} />
    </Prefetch>
  );
}
