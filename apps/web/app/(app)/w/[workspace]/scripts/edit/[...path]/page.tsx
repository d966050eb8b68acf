import { ScriptEditor } from "@/components/script-editor";

export default async function EditScriptPage({
  params,
}: {
  params: Promise<{ workspace: string; path: string[] }>;
}) {
  const { workspace, path } = await params;
  return (
    <ScriptEditor key={path.join("/")} workspace={workspace} path={path.map(decodeURIComponent).join("/")} />
  );
}
