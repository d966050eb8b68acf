import { scriptPageQueries } from "@/components/script-page/queries";
import { ScriptPage } from "@/components/script-page/script-page";
import { Prefetch } from "@/server/trpc/prefetch";

export default async function ScriptPageRoute({
  params,
}: {
  params: Promise<{ workspace: string; path: string[] }>;
}) {
  const { workspace, path } = await params;
  const full = path.map(decodeURIComponent).join("/");
  return (
    <Prefetch calls={scriptPageQueries(workspace, full)}>
      <ScriptPage key={full} workspace={workspace} path={full} />
    </Prefetch>
  );
}
