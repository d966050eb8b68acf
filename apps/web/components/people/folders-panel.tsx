"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type HTMLAttributes } from "react";
import { toast } from "sonner";
import { NamedPanel } from "@/components/people/named-panel";
import { errorField, errorMessage } from "@/lib/errors";
import { toastAndRefresh } from "@/lib/toast-and-refresh";
import { useTRPC } from "@/lib/trpc";

const LEVELS = ["owner", "writer", "viewer"] as const;
type Level = (typeof LEVELS)[number];

function GrantForm({ workspace, folder, onDone }: { workspace: string; folder: string; onDone: () => void }) {
  const trpc = useTRPC();
  const [principal, setPrincipal] = useState("");
  const [level, setLevel] = useState<Level>("viewer");
  const grant = useMutation(
    trpc.people.setFolderPermission.mutationOptions({
      onSuccess: (_data, { principal: shared, level: given }) => {
        toast.success(`Shared f/${folder}/ with ${shared} (${given})`);
        setPrincipal("");
        onDone();
      },
    }),
  );
  return (
    <form
      className="row"
      onSubmit={(e) => {
        e.preventDefault();
        grant.mutate({ workspace, name: folder, principal, level });
      }}
    >
      <label>
        Share with <span className="hint">u/&lt;username&gt; or g/&lt;group&gt;</span>
        <input
          name={`grant-${folder}`}
          value={principal}
          onChange={(e) => setPrincipal(e.target.value)}
          aria-invalid={errorField(grant.error) === "principal"}
          required
        />
        {grant.error && <span className="field-error">{errorMessage(grant.error)}</span>}
      </label>
      <label>
        Level
        <select name={`level-${folder}`} value={level} onChange={(e) => setLevel(e.target.value as Level)}>
          {LEVELS.map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
      </label>
      <button type="submit">Share</button>
    </form>
  );
}

export function FoldersPanel({ workspace, canCreate }: { workspace: string; canCreate: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const folders = useQuery(trpc.people.folders.queryOptions({ workspace }));
  const refresh = () => queryClient.invalidateQueries(trpc.people.folders.queryFilter({ workspace }));
  const create = useMutation(
    trpc.people.createFolder.mutationOptions({
      onSuccess: toastAndRefresh(({ name }) => `Created folder f/${name}/`, refresh),
    }),
  );
  const revoke = useMutation(
    trpc.people.setFolderPermission.mutationOptions({
      onSuccess: toastAndRefresh(({ name, principal }) => `Revoked ${principal} on f/${name}/`, refresh),
    }),
  );
  const remove = useMutation(
    trpc.people.deleteFolder.mutationOptions({
      onSuccess: toastAndRefresh(({ name }) => `Deleted folder f/${name}/`, refresh),
    }),
  );

  return (
    <NamedPanel
      noun="folder"
      title="Folders"
      intro={
        <>
          Items under <code>f/&lt;folder&gt;/</code> are visible only to those the folder is shared with:
          owners and writers change them, viewers read and run them. Items under <code>u/&lt;user&gt;/</code>{" "}
          belong to that user. Admins see everything.
        </>
      }
      workspace={workspace}
      query={folders}
      errors={[revoke.error, remove.error]}
      search={{
        label: "Search folders",
        placeholder: "Search by name, summary, who it is shared with…",
        fields: (f) => [
          `f/${f.name}/`,
          f.summary,
          f.myLevel,
          f.permissions.map((p) => p.principal).join(" "),
        ],
      }}
      empty="No folders you can see yet."
      noMatch={(query) => <>No folder matches “{query}”.</>}
      itemProps={(f) => ({ "data-folder": f.name }) as HTMLAttributes<HTMLDivElement>}
      heading={(f) => (
        <>
          <strong>f/{f.name}/</strong>
          <span className="muted">
            {f.summary} · your access: {f.myLevel}
          </span>
        </>
      )}
      remove={{
        label: "Delete folder",
        available: (f) => f.myLevel === "owner",
        confirm: (f) => ({
          title: `Delete folder f/${f.name}/?`,
          description: "Its sharing is forgotten.",
          action: "Delete folder",
          destructive: true,
        }),
        onSelect: (f) => remove.mutate({ workspace, name: f.name }),
      }}
      create={canCreate ? create : null}
    >
      {(f) => {
        const owner = f.myLevel === "owner";
        return (
          <>
            <div className="overflow-x-auto">
              <table>
                <tbody>
                  {f.permissions.length === 0 && (
                    <tr>
                      <td className="muted">Shared with nobody (admins only).</td>
                    </tr>
                  )}
                  {f.permissions.map((p) => (
                    <tr key={p.principal}>
                      <td>
                        {p.principal}
                        {/* Kept from an imported repository (core's GrantStatus): a pending
                            grant applies when that member or group exists here; an inert key
                            never grants anything. */}
                        {p.status === "pending" && (
                          <span
                            className="muted"
                            title="Not in this workspace yet: applies when a member with exactly this name joins (or the group is created)"
                          >
                            {" "}
                            (pending)
                          </span>
                        )}
                        {p.status === "inert" && (
                          <span className="muted" title="Neither u/<user> nor g/<group>: grants nothing">
                            {" "}
                            (grants nothing)
                          </span>
                        )}
                      </td>
                      <td>{p.level}</td>
                      <td>
                        {owner && (
                          <button
                            type="button"
                            aria-label={`Revoke ${p.principal} on ${f.name}`}
                            onClick={() =>
                              revoke.mutate({ workspace, name: f.name, principal: p.principal, level: null })
                            }
                          >
                            Revoke
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {owner && <GrantForm workspace={workspace} folder={f.name} onDone={() => void refresh()} />}
          </>
        );
      }}
    </NamedPanel>
  );
}
