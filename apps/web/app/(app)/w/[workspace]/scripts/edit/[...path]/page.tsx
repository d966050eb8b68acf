import { ScriptEditor } from "@/components/script-editor";
import { Prefetch } from "@/server/trpc/prefetch";

export default async function EditScriptPage({
  params,
}: {
  params: Promise<{ workspace: string; path: string[] }>;
}) {
  const { workspace, path } = await params;
  const scriptPath = path.map(decodeURIComponent).join("/");
  const input = { workspace, path: scriptPath };
  // What the editor asks for first (components/script-editor.tsx), started with the page.
  return (
    <Prefetch
      calls={[
        ["script.get", input],
        ["script.access", input],
        ["draft.get", input],
      ]}
    >
      <ScriptEditor key={path.join("/")} workspace={workspace} path={scriptPath} />
    </Prefetch>
  );
}
