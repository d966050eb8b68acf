"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "@/components/ui/link";
import { Button } from "@/components/ui/button";
import { useTRPC } from "@/lib/trpc";

/** A deploy refused because the path's latest version is not the one the editor started from. */
export function isDeployConflict(error: unknown): boolean {
  const data = (error as { data?: { code?: string; field?: string } } | null)?.data;
  return data?.code === "CONFLICT" && data.field === "parent_hash";
}

/**
 * The refusal in the author's words instead of the API's ("pass parent_hash …"): someone deployed
 * this path meanwhile (or a new script's path is taken). They may look at that version (in a new
 * tab, so the editor keeps their code) or deploy theirs over it.
 */
export function DeployConflict({
  workspace,
  path,
  isNew,
  deploying,
  onOverwrite,
}: {
  workspace: string;
  path: string;
  /** The editor of a new script: the path was taken, rather than changed under the author. */
  isNew: boolean;
  deploying: boolean;
  onOverwrite: (latestHash: string) => void;
}) {
  const trpc = useTRPC();
  const latest = useQuery({
    ...trpc.script.get.queryOptions({ workspace, path }),
    staleTime: 0,
    retry: false,
  });
  const by = latest.data
    ? ` by ${latest.data.createdBy} on ${new Date(latest.data.createdAt).toLocaleString()}`
    : "";
  return (
    <div className="error stack" role="alert" data-testid="deploy-conflict" style={{ marginBottom: "1rem" }}>
      <p className="m-0">
        {isNew
          ? `A script already exists at ${path} (deployed${by}). Deploying yours replaces it with a new version.`
          : `Another version of ${path} was deployed${by} while you were editing. Deploying yours replaces it.`}
      </p>
      <div className="row flex-wrap items-center">
        <Link href={`/w/${workspace}/scripts/get/${path}`} target="_blank" rel="noopener">
          View the latest version
        </Link>
        <Button
          type="button"
          variant="destructive"
          size="sm"
          disabled={!latest.data || deploying}
          onClick={() => latest.data && onOverwrite(latest.data.hash)}
        >
          Overwrite with my version
        </Button>
      </div>
    </div>
  );
}
