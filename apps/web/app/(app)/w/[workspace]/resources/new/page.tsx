import { ResourceForm } from "../resource-form";

export default async function NewResourcePage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  return <ResourceForm workspace={workspace} />;
}
