import type { ReactNode } from "react";
import { WorkspaceGate } from "@/components/app-shell";

export default async function WorkspaceLayout({
  children,
  params,
}: {
  children: ReactNode;
  params: Promise<{ workspace: string }>;
}) {
  const { workspace } = await params;
  return <WorkspaceGate workspace={decodeURIComponent(workspace)}>{children}</WorkspaceGate>;
}
