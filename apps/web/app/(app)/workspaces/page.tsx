"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { DataTable } from "@/components/data-table";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

export default function WorkspacesPage() {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const workspaces = useQuery(trpc.workspace.list.queryOptions());
  const [id, setId] = useState("");
  const [name, setName] = useState("");
  const create = useMutation(
    trpc.workspace.create.mutationOptions({
      onSuccess: async (workspace) => {
        await queryClient.invalidateQueries(trpc.workspace.list.queryFilter());
        router.push(`/w/${workspace.id}/scripts`);
      },
    }),
  );
  const field = errorField(create.error);

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate({ id, name: name || id });
  }

  return (
    <div className="mx-auto max-w-[760px]">
      <h1>Workspaces</h1>
      <DataTable
        query={workspaces}
        rowKey={(w) => w.id}
        search={{
          label: "Search workspaces",
          placeholder: "Search by name, id, role…",
          fields: (w) => [w.name, w.id, w.role],
        }}
        empty="You are not in any workspace yet. Create one below."
        noMatch={(query) => <>No workspace matches “{query}”.</>}
        columns={[
          {
            header: "Workspace",
            sortBy: (w) => w.name,
            cell: (w) => <Link href={`/w/${w.id}/scripts`}>{w.name}</Link>,
          },
          { header: "Id", cell: (w) => <code>{w.id}</code> },
          { header: "Your role", sortBy: (w) => w.role, cell: (w) => w.role },
        ]}
      />
      <h2>Create a workspace</h2>
      <form className="panel row" onSubmit={submit}>
        <label>
          Id <span className="hint">lowercase, digits, - and _</span>
          <input
            name="id"
            value={id}
            onChange={(e) => setId(e.target.value)}
            aria-invalid={field === "id"}
            required
          />
          {field === "id" && <span className="field-error">{errorMessage(create.error)}</span>}
        </label>
        <label>
          Name
          <input
            name="name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            aria-invalid={field === "name"}
          />
          {field === "name" && <span className="field-error">{errorMessage(create.error)}</span>}
        </label>
        <button className="primary" type="submit" disabled={create.isPending}>
          Create
        </button>
        {create.error && !field && <div className="error">{errorMessage(create.error)}</div>}
      </form>
    </div>
  );
}
