"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "@/components/ui/link";
import { use, useState } from "react";
import { toast } from "sonner";
import { DataTable } from "@/components/data-table";
import { ListPage } from "@/components/list-page";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

const EXAMPLE_SCHEMA = JSON.stringify(
  {
    type: "object",
    properties: { url: { type: "string" }, token: { type: "string" } },
    required: ["url"],
  },
  null,
  2,
);

export default function ResourceTypesPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const types = useQuery(trpc.resource.types.queryOptions({ workspace }));
  const [name, setName] = useState("c_");
  const [description, setDescription] = useState("");
  const [schemaText, setSchemaText] = useState(EXAMPLE_SCHEMA);
  const [jsonError, setJsonError] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries(trpc.resource.types.pathFilter());
  const create = useMutation(
    trpc.resource.createType.mutationOptions({
      onSuccess: async (_data, { name: created }) => {
        toast.success(`Created resource type ${created}`);
        setName("c_");
        setDescription("");
        await refresh();
      },
    }),
  );
  const fields = (type: { schema: unknown }) =>
    (type.schema as { properties?: Record<string, unknown> } | null)?.properties;
  const remove = useMutation(
    trpc.resource.deleteType.mutationOptions({
      onSuccess: async (_data, { name: deleted }) => {
        toast.success(`Deleted resource type ${deleted}`);
        await refresh();
      },
    }),
  );
  const field = errorField(create.error);

  function submit(event: React.FormEvent) {
    event.preventDefault();
    let schema: unknown;
    try {
      schema = JSON.parse(schemaText);
    } catch (error) {
      setJsonError(`schema: not valid JSON (${(error as Error).message})`);
      return;
    }
    setJsonError(null);
    create.mutate({ workspace, name, description, schema });
  }

  return (
    <ListPage
      title="Resource types"
      className="stack"
      actions={<Link href={`/w/${workspace}/resources`}>Back to resources</Link>}
    >
      <DataTable
        query={types}
        rowKey={(type) => type.name}
        search={{
          label: "Search resource types",
          placeholder: "Search by name, field, description…",
          fields: (type) => [
            type.name,
            type.description,
            type.builtin && "built-in",
            Object.keys(fields(type) ?? {}).join(" "),
          ],
        }}
        noMatch={(query) => <>No resource type matches “{query}”.</>}
        columns={[
          {
            header: "Name",
            sortBy: (type) => type.name,
            cell: (type) => (
              <>
                <code>{type.name}</code> {type.builtin && <span className="muted">built-in</span>}
              </>
            ),
          },
          {
            header: "Fields",
            cell: (type) => {
              const properties = fields(type);
              return properties ? Object.keys(properties).join(", ") : <span className="muted">any</span>;
            },
          },
          { header: "Description", cell: (type) => type.description },
        ]}
        actions={[
          {
            label: "Delete",
            available: (type) => !type.builtin,
            confirm: (type) => ({
              title: `Delete resource type ${type.name}?`,
              description: "Resources of this type keep their values.",
              action: "Delete resource type",
              destructive: true,
            }),
            onSelect: (type) => remove.mutate({ workspace, name: type.name }),
          },
        ]}
      />
      {remove.error && <div className="error">{errorMessage(remove.error)}</div>}
      <form className="panel stack" style={{ maxWidth: 760 }} onSubmit={submit}>
        <h2 style={{ margin: 0 }}>New resource type</h2>
        <label>
          Name <span className="hint">lowercase letters, digits and _ (Windmill names custom types c_…)</span>
          <input
            name="name"
            value={name}
            aria-invalid={field === "name"}
            onChange={(e) => setName(e.target.value)}
          />
          {field === "name" && <span className="field-error">{errorMessage(create.error)}</span>}
        </label>
        <label>
          Description
          <input name="description" value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
        <label>
          Schema <span className="hint">JSON Schema of the values</span>
          <textarea
            name="schema"
            rows={10}
            spellCheck={false}
            value={schemaText}
            onChange={(e) => setSchemaText(e.target.value)}
          />
          {(jsonError || field === "schema") && (
            <span className="field-error">{jsonError ?? errorMessage(create.error)}</span>
          )}
        </label>
        {create.error && field !== "name" && field !== "schema" && (
          <div className="error">{errorMessage(create.error)}</div>
        )}
        <div>
          <button className="primary" type="submit" disabled={create.isPending}>
            Create type
          </button>
        </div>
      </form>
    </ListPage>
  );
}
