"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { GitFork } from "lucide-react";
import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { ItemActions } from "@/components/item-page";
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
    <ItemActions
      noun="script"
      path={path}
      editHref={`/w/${workspace}/scripts/edit/${path}`}
      archived={archived}
      canWrite={canWrite}
      busy={busy}
      archiveDescription="It can no longer be run, by hand, by its schedules or by webhooks. Its versions and runs stay, and you can unarchive it."
      deleteDescription="Every version of the script is deleted for good. Its past runs stay in the run history."
      onArchive={() => archive.mutate({ workspace, path })}
      onUnarchive={() => unarchive.mutate({ workspace, path })}
      onDelete={() => remove.mutate({ workspace, path })}
      extra={
        canCreate && (
          <Button asChild>
            <Link href={forkHref(workspace, path)}>
              <GitFork aria-hidden /> Fork
            </Link>
          </Button>
        )
      }
    />
  );
}
