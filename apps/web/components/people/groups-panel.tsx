"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { toast } from "sonner";
import { ListSearch, matchesQuery } from "@/components/list-search";
import { useConfirm } from "@/components/ui/confirm";
import { errorField, errorMessage } from "@/lib/errors";
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
      onSuccess: async (_data, { name: created }) => {
        toast.success(`Created group ${created}`);
        setName("");
        setSummary("");
        await refresh();
      },
    }),
  );
  const remove = useMutation(
    trpc.people.deleteGroup.mutationOptions({
      onSuccess: async (_data, { name: deleted }) => {
        toast.success(`Deleted group ${deleted}`);
        await refresh();
      },
    }),
  );
  const removeMember = useMutation(
    trpc.people.removeGroupMember.mutationOptions({
      onSuccess: async (_data, { name: group, username }) => {
        toast.success(`Removed ${username} from ${group}`);
        await refresh();
      },
    }),
  );
  const confirm = useConfirm();
  const [query, setQuery] = useState("");
  const shown = (groups.data ?? []).filter((g) =>
    matchesQuery(query, g.name, g.summary, g.members.join(" ")),
  );
  const [name, setName] = useState("");
  const [summary, setSummary] = useState("");
  const field = errorField(create.error);

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate({ workspace, name, summary: summary || null });
  }

  return (
    <section>
      <h2>Groups</h2>
      <p className="muted">
        Groups collect members so that folders can be shared with them at once (<code>g/&lt;group&gt;</code>);{" "}
        <code>g/all</code> is everyone in the workspace.
      </p>
      {groups.error && <div className="error">{errorMessage(groups.error)}</div>}
      {(remove.error ?? removeMember.error) && (
        <div className="error">{errorMessage(remove.error ?? removeMember.error)}</div>
      )}
      {groups.data?.length === 0 && <div className="panel empty">No groups yet.</div>}
      {!!groups.data?.length && (
        <ListSearch
          label="Search groups"
          placeholder="Search by name, summary, member…"
          value={query}
          onChange={setQuery}
          shown={shown.length}
          total={groups.data.length}
        />
      )}
      {!!groups.data?.length && shown.length === 0 && (
        <div className="panel empty">No group matches “{query}”.</div>
      )}
      <div className="stack">
        {shown.map((g) => (
          <div className="panel" key={g.name} data-group={g.name}>
            <div className="toolbar">
              <strong>{g.name}</strong>
              {g.summary && <span className="muted">{g.summary}</span>}
              {canManage && (
                <button
                  type="button"
                  onClick={async () => {
                    if (
                      await confirm({
                        title: `Delete group ${g.name}?`,
                        description: "Folders shared with it are no longer shared with its members.",
                        action: "Delete group",
                        destructive: true,
                      })
                    )
                      remove.mutate({ workspace, name: g.name });
                  }}
                >
                  Delete group
                </button>
              )}
            </div>
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
          </div>
        ))}
      </div>
      {canManage && (
        <form className="panel row" onSubmit={submit} style={{ marginTop: "0.75rem" }}>
          <label>
            New group
            <input
              name="group_name"
              value={name}
              onChange={(e) => setName(e.target.value)}
              aria-invalid={field === "name"}
              required
            />
            {field === "name" && <span className="field-error">{errorMessage(create.error)}</span>}
          </label>
          <label>
            Summary
            <input name="group_summary" value={summary} onChange={(e) => setSummary(e.target.value)} />
          </label>
          <button className="primary" type="submit" disabled={create.isPending}>
            Create group
          </button>
          {create.error && !field && <div className="error">{errorMessage(create.error)}</div>}
        </form>
      )}
    </section>
  );
}
