"use client";
import { useQuery } from "@tanstack/react-query";
import { use } from "react";
import { FoldersPanel } from "@/components/people/folders-panel";
import { GroupsPanel } from "@/components/people/groups-panel";
import { useTRPC } from "@/lib/trpc";

export default function FoldersPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const workspaces = useQuery(trpc.workspace.list.queryOptions());
  const role = workspaces.data?.find((w) => w.id === workspace)?.role;
  return (
    <div>
      <h1>Folders &amp; groups</h1>
      <FoldersPanel workspace={workspace} canCreate={role === "admin" || role === "developer"} />
      <GroupsPanel workspace={workspace} canManage={role === "admin"} />
    </div>
  );
}
