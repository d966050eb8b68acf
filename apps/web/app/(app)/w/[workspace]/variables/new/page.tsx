import { VariableForm } from "../variable-form";

export default async function NewVariablePage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  return <VariableForm workspace={workspace} />;
}
