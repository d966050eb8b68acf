import { ScriptEditor } from "@/components/script-editor";

export default async function NewScriptPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  return <ScriptEditor workspace={workspace} />;
}
