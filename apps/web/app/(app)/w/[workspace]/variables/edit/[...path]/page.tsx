import { VariableForm } from "../../variable-form";

export default async function EditVariablePage({
  params,
}: {
  params: Promise<{ workspace: string; path: string[] }>;
}) {
  const { workspace, path } = await params;
  const full = path.map(decodeURIComponent).join("/");
  return <VariableForm key={full} workspace={workspace} path={full} />;
}
