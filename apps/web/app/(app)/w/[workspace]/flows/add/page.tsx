import { FlowEditor } from "@/components/flow-editor/flow-editor";

export default async function NewFlowPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  return <FlowEditor workspace={workspace} />;
}
