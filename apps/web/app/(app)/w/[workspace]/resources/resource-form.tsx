"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useMemo, useState } from "react";
import { toast } from "sonner";
import { useConfirm } from "@/components/ui/confirm";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

interface ObjectSchema {
  properties?: Record<string, { type?: string; default?: unknown; description?: string }>;
  required?: string[];
}

/** A starting value for a type: its fields with their defaults, so the form shows what to fill. */
function template(schema: ObjectSchema | null): string {
  if (!schema?.properties) return "{}";
  const value: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties)) {
    if (property.default !== undefined) value[name] = property.default;
    else if (schema.required?.includes(name)) value[name] = property.type === "integer" ? 0 : "";
  }
  return JSON.stringify(value, null, 2);
}

export function ResourceForm({ workspace, path: existingPath }: { workspace: string; path?: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const me = useQuery(trpc.me.queryOptions());
  const types = useQuery(trpc.resource.types.queryOptions({ workspace }));
  const existing = useQuery({
    ...trpc.resource.get.queryOptions({ workspace, path: existingPath ?? "" }),
    enabled: !!existingPath,
  });
  // Whether the caller may change this resource (role and path): the server decides.
  const access = useQuery({
    ...trpc.access.path.queryOptions({ workspace, path: existingPath ?? "", kind: "resource" }),
    enabled: !!existingPath,
  });
  const readOnly = !!existingPath && !access.data?.canWrite;
  const confirm = useConfirm();

  const [path, setPath] = useState(existingPath ?? "");
  const [resourceType, setResourceType] = useState("postgresql");
  const [valueText, setValueText] = useState("");
  const [description, setDescription] = useState("");
  const [jsonError, setJsonError] = useState<string | null>(null);

  const type = useMemo(() => types.data?.find((t) => t.name === resourceType), [types.data, resourceType]);
  const schema = (type?.schema ?? null) as ObjectSchema | null;

  useEffect(() => {
    if (!existingPath && me.data && !path) setPath(`u/${me.data.username}/`);
  }, [existingPath, me.data, path]);

  // A new resource starts from its type's template once the types are known, unless the user
  // has typed a value already.
  const [valueEdited, setValueEdited] = useState(false);
  const [templated, setTemplated] = useState(false);
  useEffect(() => {
    if (existingPath || templated || valueEdited || !types.data) return;
    setValueText(template(schema));
    setTemplated(true);
  }, [existingPath, templated, valueEdited, types.data, schema]);

  useEffect(() => {
    const resource = existing.data;
    if (!resource) return;
    setPath(resource.path);
    setResourceType(resource.resourceType);
    setDescription(resource.description ?? "");
    setValueText(JSON.stringify(resource.value, null, 2));
  }, [existing.data]);

  const done = async (message: string) => {
    toast.success(message);
    await queryClient.invalidateQueries(trpc.resource.pathFilter());
    router.push(`/w/${workspace}/resources`);
  };
  const saved = () => done(`Saved ${path}`);
  const create = useMutation(trpc.resource.create.mutationOptions({ onSuccess: saved }));
  const update = useMutation(trpc.resource.update.mutationOptions({ onSuccess: saved }));
  const remove = useMutation(
    trpc.resource.delete.mutationOptions({ onSuccess: () => done(`Deleted ${existingPath}`) }),
  );
  const save = existingPath ? update : create;
  const field = errorField(save.error);
  const valueFieldError = jsonError ?? (field?.startsWith("value") ? errorMessage(save.error) : null);

  function submit(event: React.FormEvent) {
    event.preventDefault();
    if (readOnly) return;
    let value: unknown;
    try {
      value = JSON.parse(valueText);
    } catch (error) {
      setJsonError(`value: not valid JSON (${(error as Error).message})`);
      return;
    }
    setJsonError(null);
    if (existingPath) {
      update.mutate({
        workspace,
        path: existingPath,
        newPath: path !== existingPath ? path : undefined,
        value,
        description,
      });
    } else {
      create.mutate({ workspace, path, resourceType, value, description });
    }
  }

  function changeType(next: string) {
    const nextSchema = (types.data?.find((t) => t.name === next)?.schema ?? null) as ObjectSchema | null;
    if (valueText === template(schema)) setValueText(template(nextSchema));
    setResourceType(next);
  }

  return (
    <form onSubmit={submit}>
      <div className="toolbar">
        <h1>{existingPath ?? "New resource"}</h1>
        {readOnly ? (
          access.data && (
            <span className="muted" data-testid="read-only-note">
              You can see this resource but not change it.
            </span>
          )
        ) : (
          <div className="row">
            {existingPath && (
              <button
                type="button"
                disabled={remove.isPending}
                onClick={async () => {
                  const ok = await confirm({
                    title: `Delete ${existingPath}?`,
                    description: "Scripts that use this resource will no longer find it.",
                    action: "Delete resource",
                    destructive: true,
                  });
                  if (ok) remove.mutate({ workspace, path: existingPath });
                }}
              >
                Delete
              </button>
            )}
            <button className="primary" type="submit" disabled={save.isPending}>
              {save.isPending ? "Saving…" : "Save"}
            </button>
          </div>
        )}
      </div>
      {existing.error && <div className="error">{errorMessage(existing.error)}</div>}
      <div className="panel stack" style={{ maxWidth: 760 }}>
        <div className="row">
          <label style={{ flex: 2 }}>
            Path <span className="hint">u/&lt;user&gt;/&lt;name&gt; or f/&lt;folder&gt;/&lt;name&gt;</span>
            <input
              name="path"
              value={path}
              readOnly={readOnly}
              aria-invalid={field === "path"}
              onChange={(e) => setPath(e.target.value)}
            />
            {field === "path" && <span className="field-error">{errorMessage(save.error)}</span>}
          </label>
          <label style={{ flex: 1 }}>
            Type
            <select
              name="resource_type"
              value={resourceType}
              disabled={!!existingPath}
              onChange={(e) => changeType(e.target.value)}
            >
              {(types.data ?? [{ name: resourceType }]).map((t) => (
                <option key={t.name}>{t.name}</option>
              ))}
            </select>
            {field === "resource_type" && <span className="field-error">{errorMessage(save.error)}</span>}
          </label>
        </div>
        <label>
          Value
          <span className="hint">
            JSON
            {schema?.properties
              ? `: ${Object.keys(schema.properties)
                  .map((name) => (schema.required?.includes(name) ? `${name}*` : name))
                  .join(", ")}`
              : " (any value)"}
            . Write <code>$var:&lt;path&gt;</code> for a password kept in a secret variable.
          </span>
          <textarea
            name="value"
            rows={12}
            spellCheck={false}
            style={{ fontFamily: "var(--mono, monospace)" }}
            value={valueText}
            readOnly={readOnly}
            aria-invalid={!!valueFieldError}
            onChange={(e) => (setValueText(e.target.value), setValueEdited(true))}
          />
          {valueFieldError && (
            <span className="field-error" data-testid="value-error">
              {valueFieldError}
            </span>
          )}
        </label>
        <label>
          Description
          <input
            name="description"
            value={description}
            readOnly={readOnly}
            onChange={(e) => setDescription(e.target.value)}
          />
          {field === "description" && <span className="field-error">{errorMessage(save.error)}</span>}
        </label>
        {save.error &&
          !field?.startsWith("value") &&
          !["path", "resource_type", "description"].includes(field ?? "") && (
            <div className="error" role="alert">
              {errorMessage(save.error)}
            </div>
          )}
        {remove.error && <div className="error">{errorMessage(remove.error)}</div>}
      </div>
    </form>
  );
}
