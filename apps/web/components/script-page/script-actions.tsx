"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Archive, ArchiveRestore, GitFork, Pencil, Trash2 } from "lucide-react";
import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { useConfirm } from "@/components/ui/confirm";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

/** Where Fork leads: the editor for a new script, prefilled with this one's content. */
export function forkHref(workspace: string, path: string): string {
  return `/w/${workspace}/scripts/new?fork=${encodeURIComponent(path)}`;
}

/**
 * Edit, Fork, Archive or Unarchive, Delete: each offered only to whom the server says may do it
 * (canWrite for this path, canCreate for a new script).
 */
export function ScriptActions({
  workspace,
  path,
  archived,
  canWrite,
  canCreate,
}: {
  workspace: string;
  path: string;
  archived: boolean;
  canWrite: boolean;
  canCreate: boolean;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const confirm = useConfirm();
  const refresh = () => queryClient.invalidateQueries(trpc.script.pathFilter());
  const failed = (error: unknown) => toast.error(errorMessage(error));
  const archive = useMutation(
    trpc.script.archive.mutationOptions({
      onSuccess: async () => {
        toast.success(`Archived ${path}`);
        await refresh();
      },
      onError: failed,
    }),
  );
  const unarchive = useMutation(
    trpc.script.unarchive.mutationOptions({
      onSuccess: async () => {
        toast.success(`Unarchived ${path}`);
        await refresh();
      },
      onError: failed,
    }),
  );
  const remove = useMutation(
    trpc.script.delete.mutationOptions({
      onSuccess: async () => {
        toast.success(`Deleted ${path}`);
        router.push(`/w/${workspace}/scripts`);
        await refresh();
      },
      onError: failed,
    }),
  );
  const busy = archive.isPending || unarchive.isPending || remove.isPending;
  if (!canWrite && !canCreate) return null;
  return (
    <div className="row flex-wrap" role="group" aria-label="Script actions">
      {canWrite && !archived && (
        <Button asChild variant="primary">
          <Link href={`/w/${workspace}/scripts/edit/${path}`}>
            <Pencil aria-hidden /> Edit
          </Link>
        </Button>
      )}
      {canCreate && (
        <Button asChild>
          <Link href={forkHref(workspace, path)}>
            <GitFork aria-hidden /> Fork
          </Link>
        </Button>
      )}
      {canWrite && !archived && (
        <Button
          disabled={busy}
          onClick={async () => {
            const ok = await confirm({
              title: `Archive ${path}?`,
              description:
                "It can no longer be run, by hand, by its schedules or by webhooks. Its versions and runs stay, and you can unarchive it.",
              action: "Archive script",
            });
            if (ok) archive.mutate({ workspace, path });
          }}
        >
          <Archive aria-hidden /> Archive
        </Button>
      )}
      {canWrite && archived && (
        <Button disabled={busy} onClick={() => unarchive.mutate({ workspace, path })}>
          <ArchiveRestore aria-hidden /> Unarchive
        </Button>
      )}
      {canWrite && (
        <Button
          variant="destructive"
          disabled={busy}
          onClick={async () => {
            const ok = await confirm({
              title: `Delete ${path}?`,
              description:
                "Every version of the script is deleted for good. Its past runs stay in the run history.",
              action: "Delete script",
              destructive: true,
            });
            if (ok) remove.mutate({ workspace, path });
          }}
        >
          <Trash2 aria-hidden /> Delete
        </Button>
      )}
    </div>
  );
}
