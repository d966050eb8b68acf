"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { toast } from "sonner";
import { ListSearch, matchesQuery } from "@/components/list-search";
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
  const [query, setQuery] = useState("");
  const shown = (users.data ?? []).filter((u) =>
    matchesQuery(
      query,
      u.email,
      u.username,
      u.isSuperAdmin && "superadmin",
      u.disabled ? "disabled" : "active",
    ),
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
      {users.error && <div className="error">{errorMessage(users.error)}</div>}
      {update.error && <div className="error">{errorMessage(update.error)}</div>}
      {users.data && (
        <ListSearch
          label="Search users"
          placeholder="Search by email, username, status…"
          value={query}
          onChange={setQuery}
          shown={shown.length}
          total={users.data.length}
        />
      )}
      {users.data && shown.length === 0 && query.trim() && (
        <div className="panel empty">No user matches “{query}”.</div>
      )}
      {users.data && shown.length > 0 && (
        <div className="overflow-x-auto">
          <table>
            <thead>
              <tr>
                <th>Email</th>
                <th>Username</th>
                <th>Superadmin</th>
                <th>Status</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {shown.map((u) => (
                <tr key={u.id} data-email={u.email}>
                  <td>{u.email}</td>
                  <td>{u.username}</td>
                  <td>{u.isSuperAdmin ? "yes" : ""}</td>
                  <td>{u.disabled ? "disabled" : "active"}</td>
                  <td>
                    <button
                      type="button"
                      onClick={() => update.mutate({ email: u.email, disabled: !u.disabled })}
                    >
                      {u.disabled ? "Enable" : "Disable"}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
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
