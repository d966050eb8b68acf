import { ScriptEditor } from "@/components/script-editor";

export default async function NewScriptPage({
  params,
  searchParams,
}: {
  params: Promise<{ workspace: string }>;
  searchParams: Promise<{ fork?: string | string[] }>;
}) {
  const { workspace } = await params;
  const { fork } = await searchParams;
  const forkOf = typeof fork === "string" && fork ? fork : undefined;
  return <ScriptEditor key={forkOf ?? ""} workspace={workspace} forkOf={forkOf} />;
}
