import { FlowEditor } from "@/components/flow-editor/flow-editor";

export default async function EditFlowPage({
  params,
}: {
  params: Promise<{ workspace: string; path: string[] }>;
}) {
  const { workspace, path } = await params;
  const full = path.map(decodeURIComponent).join("/");
  return <FlowEditor key={full} workspace={workspace} path={full} />;
}
