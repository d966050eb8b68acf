import { FlowPage } from "@/components/flow-editor/flow-page";

export default async function FlowPageRoute({
  params,
}: {
  params: Promise<{ workspace: string; path: string[] }>;
}) {
  const { workspace, path } = await params;
  const full = path.map(decodeURIComponent).join("/");
  return <FlowPage key={full} workspace={workspace} path={full} />;
}
