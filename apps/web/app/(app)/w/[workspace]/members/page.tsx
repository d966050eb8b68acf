"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { use, useState, type FormEvent, type HTMLAttributes } from "react";
import { toast } from "sonner";
import { DataTable } from "@/components/data-table";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

const ROLES = ["admin", "developer", "operator"] as const;
type Role = (typeof ROLES)[number];

export default function MembersPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const members = useQuery(trpc.people.members.queryOptions({ workspace }));
  const roles = useQuery(trpc.workspace.list.queryOptions());
  const isAdmin = roles.data?.find((w) => w.id === workspace)?.role === "admin";
  const refresh = () => queryClient.invalidateQueries(trpc.people.members.queryFilter({ workspace }));
  const update = useMutation(
    trpc.people.updateMember.mutationOptions({
      onSuccess: async (_data, { username }) => {
        toast.success(`Saved ${username}`);
        await refresh();
      },
    }),
  );
  const remove = useMutation(
    trpc.people.removeMember.mutationOptions({
      onSuccess: async (_data, { username }) => {
        toast.success(`Removed ${username} from ${workspace}`);
        await refresh();
      },
    }),
  );
  const add = useMutation(
    trpc.people.addMember.mutationOptions({
      onSuccess: async (_data, { email: added }) => {
        toast.success(`Added ${added}`);
        setEmail("");
        await refresh();
      },
    }),
  );
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("developer");
  const field = errorField(add.error);
  const rowError = update.error ?? remove.error;

  function submit(event: FormEvent) {
    event.preventDefault();
    add.mutate({ workspace, email, role });
  }

  return (
    <div>
      <h1>Members</h1>
      <p className="muted">
        Admins manage the workspace; developers write and run scripts; operators run and view only.
      </p>
      {rowError && <div className="error">{errorMessage(rowError)}</div>}
      <DataTable
        query={members}
        rowKey={(m) => m.username}
        rowProps={(m) => ({ "data-username": m.username }) as HTMLAttributes<HTMLTableRowElement>}
        search={{
          label: "Search members",
          placeholder: "Search by name, email, role, group…",
          fields: (m) => [
            m.username,
            m.email,
            m.role,
            m.groups.join(" "),
            m.disabled ? "disabled" : "active",
          ],
        }}
        empty="Nobody is a member of this workspace yet."
        noMatch={(query) => <>No member matches “{query}”.</>}
        columns={[
          {
            header: "User",
            sortBy: (m) => m.username,
            cell: (m) => (
              <>
                {m.username}
                {m.isSuperAdmin && <span className="muted"> (superadmin)</span>}
              </>
            ),
          },
          { header: "Email", sortBy: (m) => m.email, cell: (m) => m.email },
          {
            header: "Role",
            sortBy: (m) => m.role,
            cell: (m) =>
              isAdmin ? (
                <select
                  aria-label={`Role of ${m.username}`}
                  value={m.role}
                  onChange={(e) =>
                    update.mutate({ workspace, username: m.username, role: e.target.value as Role })
                  }
                >
                  {ROLES.map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </select>
              ) : (
                m.role
              ),
          },
          { header: "Groups", cell: (m) => m.groups.join(", ") || <span className="muted">none</span> },
          { header: "Status", cell: (m) => (m.disabled ? "disabled" : "active") },
        ]}
        actions={[
          {
            label: "Disable",
            available: (m) => isAdmin && !m.disabled,
            onSelect: (m) => update.mutate({ workspace, username: m.username, disabled: true }),
          },
          {
            label: "Enable",
            available: (m) => isAdmin && m.disabled,
            onSelect: (m) => update.mutate({ workspace, username: m.username, disabled: false }),
          },
          {
            label: "Remove",
            available: () => isAdmin,
            confirm: (m) => ({
              title: `Remove ${m.username} from ${workspace}?`,
              description: "They lose access to this workspace; their scripts and runs stay.",
              action: "Remove member",
              destructive: true,
            }),
            onSelect: (m) => remove.mutate({ workspace, username: m.username }),
          },
        ]}
      />
      {isAdmin && (
        <>
          <h2>Add a member</h2>
          <form className="panel row" onSubmit={submit}>
            <label>
              Email or username <span className="hint">of an account on this instance</span>
              <input
                name="email"
                value={email}
                onChange={(e) => setEmail(e.target.value)}
                aria-invalid={field === "email"}
                required
              />
              {field === "email" && <span className="field-error">{errorMessage(add.error)}</span>}
            </label>
            <label>
              Role
              <select name="role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
                {ROLES.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            </label>
            <button className="primary" type="submit" disabled={add.isPending}>
              Add
            </button>
            {add.error && !field && <div className="error">{errorMessage(add.error)}</div>}
          </form>
        </>
      )}
    </div>
  );
}
