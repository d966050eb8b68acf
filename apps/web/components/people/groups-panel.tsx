"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type HTMLAttributes } from "react";
import { toast } from "sonner";
import { NamedPanel } from "@/components/people/named-panel";
import { errorMessage } from "@/lib/errors";
import { toastAndRefresh } from "@/lib/toast-and-refresh";
import { useTRPC } from "@/lib/trpc";

function AddToGroup({ workspace, group, onDone }: { workspace: string; group: string; onDone: () => void }) {
  const trpc = useTRPC();
  const [username, setUsername] = useState("");
  const add = useMutation(
    trpc.people.addGroupMember.mutationOptions({
      onSuccess: (_data, { username: added }) => {
        toast.success(`Added ${added} to ${group}`);
        setUsername("");
        onDone();
      },
    }),
  );
  return (
    <form
      className="row"
      onSubmit={(e) => {
        e.preventDefault();
        add.mutate({ workspace, name: group, username });
      }}
    >
      <label>
        Add member to {group}
        <input
          name={`add-to-${group}`}
          placeholder="username"
          value={username}
          onChange={(e) => setUsername(e.target.value)}
          aria-invalid={!!add.error}
        />
        {add.error && <span className="field-error">{errorMessage(add.error)}</span>}
      </label>
      <button type="submit">Add</button>
    </form>
  );
}

export function GroupsPanel({ workspace, canManage }: { workspace: string; canManage: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const groups = useQuery(trpc.people.groups.queryOptions({ workspace }));
  const refresh = () => queryClient.invalidateQueries(trpc.people.groups.queryFilter({ workspace }));
  const create = useMutation(
    trpc.people.createGroup.mutationOptions({
      onSuccess: toastAndRefresh(({ name }) => `Created group ${name}`, refresh),
    }),
  );
  const remove = useMutation(
    trpc.people.deleteGroup.mutationOptions({
      onSuccess: toastAndRefresh(({ name }) => `Deleted group ${name}`, refresh),
    }),
  );
  const removeMember = useMutation(
    trpc.people.removeGroupMember.mutationOptions({
      onSuccess: toastAndRefresh(({ name, username }) => `Removed ${username} from ${name}`, refresh),
    }),
  );

  return (
    <NamedPanel
      noun="group"
      title="Groups"
      intro={
        <>
          Groups collect members so that folders can be shared with them at once (<code>g/&lt;group&gt;</code>
          ); <code>g/all</code> is everyone in the workspace.
        </>
      }
      workspace={workspace}
      query={groups}
      errors={[remove.error, removeMember.error]}
      search={{
        label: "Search groups",
        placeholder: "Search by name, summary, member…",
        fields: (g) => [g.name, g.summary, g.members.join(" ")],
      }}
      empty="No groups yet."
      noMatch={(query) => <>No group matches “{query}”.</>}
      itemProps={(g) => ({ "data-group": g.name }) as HTMLAttributes<HTMLDivElement>}
      heading={(g) => (
        <>
          <strong>{g.name}</strong>
          {g.summary && <span className="muted">{g.summary}</span>}
        </>
      )}
      remove={{
        label: "Delete group",
        available: () => canManage,
        confirm: (g) => ({
          title: `Delete group ${g.name}?`,
          description: "Folders shared with it are no longer shared with its members.",
          action: "Delete group",
          destructive: true,
        }),
        onSelect: (g) => remove.mutate({ workspace, name: g.name }),
      }}
      create={canManage ? create : null}
    >
      {(g) => (
        <>
          <div>
            Members: {g.members.length === 0 && <span className="muted">none</span>}
            {g.members.map((m) => (
              <span key={m} className="row" style={{ display: "inline-flex", marginRight: 8 }}>
                {m}
                {canManage && (
                  <button
                    type="button"
                    aria-label={`Remove ${m} from ${g.name}`}
                    onClick={() => removeMember.mutate({ workspace, name: g.name, username: m })}
                  >
                    ×
                  </button>
                )}
              </span>
            ))}
          </div>
          {canManage && <AddToGroup workspace={workspace} group={g.name} onDone={() => void refresh()} />}
        </>
      )}
    </NamedPanel>
  );
}
