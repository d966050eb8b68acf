"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent, type HTMLAttributes } from "react";
import { toast } from "sonner";
import { DataTable } from "@/components/data-table";
import { PlainPage } from "@/components/people/plain-page";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

export default function UsersPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const users = useQuery({ ...trpc.people.accounts.queryOptions(), retry: false });
  const refresh = () => queryClient.invalidateQueries(trpc.people.accounts.queryFilter());
  const [form, setForm] = useState({ email: "", password: "", name: "", superAdmin: false });
  const create = useMutation(
    trpc.people.createAccount.mutationOptions({
      onSuccess: async (_data, { email }) => {
        toast.success(`Created ${email}`);
        setForm({ email: "", password: "", name: "", superAdmin: false });
        await refresh();
      },
    }),
  );
  const update = useMutation(
    trpc.people.updateAccount.mutationOptions({
      onSuccess: async (_data, { email, disabled }) => {
        toast.success(disabled ? `Disabled ${email}` : `Saved ${email}`);
        await refresh();
      },
    }),
  );
  const field = errorField(create.error);

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate({ ...form, name: form.name || null });
  }

  const text = (name: "email" | "password" | "name", label: string, type = "text") => (
    <label>
      {label}
      <input
        name={name}
        type={type}
        value={form[name]}
        onChange={(e) => setForm({ ...form, [name]: e.target.value })}
        aria-invalid={field === name}
        required={name !== "name"}
      />
      {field === name && <span className="field-error">{errorMessage(create.error)}</span>}
    </label>
  );

  return (
    <PlainPage title="Users">
      {update.error && <div className="error">{errorMessage(update.error)}</div>}
      <DataTable
        query={users}
        rowKey={(u) => u.id}
        rowProps={(u) => ({ "data-email": u.email }) as HTMLAttributes<HTMLTableRowElement>}
        search={{
          label: "Search users",
          placeholder: "Search by email, username, status…",
          fields: (u) => [
            u.email,
            u.username,
            u.isSuperAdmin && "superadmin",
            u.disabled ? "disabled" : "active",
          ],
        }}
        noMatch={(query) => <>No user matches “{query}”.</>}
        columns={[
          { header: "Email", sortBy: (u) => u.email, cell: (u) => u.email },
          { header: "Username", sortBy: (u) => u.username, cell: (u) => u.username },
          { header: "Superadmin", cell: (u) => (u.isSuperAdmin ? "yes" : "") },
          { header: "Status", cell: (u) => (u.disabled ? "disabled" : "active") },
        ]}
        actions={[
          {
            label: "Disable",
            available: (u) => !u.disabled,
            onSelect: (u) => update.mutate({ email: u.email, disabled: true }),
          },
          {
            label: "Enable",
            available: (u) => u.disabled,
            onSelect: (u) => update.mutate({ email: u.email, disabled: false }),
          },
        ]}
      />
      {users.data && (
        <>
          <h2>Create a user</h2>
          <form className="panel row" onSubmit={submit}>
            {text("email", "Email")}
            {text("password", "Password", "password")}
            {text("name", "Name")}
            <label>
              Superadmin
              <input
                name="super_admin"
                type="checkbox"
                checked={form.superAdmin}
                onChange={(e) => setForm({ ...form, superAdmin: e.target.checked })}
              />
            </label>
            <button className="primary" type="submit" disabled={create.isPending}>
              Create user
            </button>
            {create.error && !field && <div className="error">{errorMessage(create.error)}</div>}
          </form>
        </>
      )}
    </PlainPage>
  );
}
