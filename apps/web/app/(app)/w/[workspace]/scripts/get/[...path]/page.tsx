import { ScriptPage } from "@/components/script-page/script-page";

export default async function ScriptPageRoute({
  params,
}: {
  params: Promise<{ workspace: string; path: string[] }>;
}) {
  const { workspace, path } = await params;
  const full = path.map(decodeURIComponent).join("/");
  return <ScriptPage key={full} workspace={workspace} path={full} />;
}
