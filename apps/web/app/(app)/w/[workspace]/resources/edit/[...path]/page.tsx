import { ResourceForm } from "../../resource-form";

export default async function EditResourcePage({
  params,
}: {
  params: Promise<{ workspace: string; path: string[] }>;
}) {
  const { workspace, path } = await params;
  const full = path.map(decodeURIComponent).join("/");
  return <ResourceForm key={full} workspace={workspace} path={full} />;
}
