"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { toast } from "sonner";
import { useConfirm } from "@/components/ui/confirm";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

export function VariableForm({ workspace, path: existingPath }: { workspace: string; path?: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const me = useQuery(trpc.me.queryOptions());
  const existing = useQuery({
    ...trpc.variable.get.queryOptions({ workspace, path: existingPath ?? "" }),
    enabled: !!existingPath,
  });
  // Whether the caller may change this variable (role and path): the server decides.
  const access = useQuery({
    ...trpc.access.path.queryOptions({ workspace, path: existingPath ?? "", kind: "variable" }),
    enabled: !!existingPath,
  });
  const readOnly = !!existingPath && !access.data?.canWrite;
  const confirm = useConfirm();

  const [path, setPath] = useState(existingPath ?? "");
  const [value, setValue] = useState("");
  // Editing a secret: the value field starts empty and only replaces the secret once typed in.
  const [valueTouched, setValueTouched] = useState(!existingPath);
  const [isSecret, setIsSecret] = useState(false);
  const [description, setDescription] = useState("");

  useEffect(() => {
    if (!existingPath && me.data && !path) setPath(`u/${me.data.username}/`);
  }, [existingPath, me.data, path]);

  useEffect(() => {
    const variable = existing.data;
    if (!variable) return;
    setPath(variable.path);
    setIsSecret(variable.isSecret);
    setDescription(variable.description);
    setValue(variable.value ?? "");
    setValueTouched(!variable.isSecret);
  }, [existing.data]);

  const done = async (message: string) => {
    toast.success(message);
    await queryClient.invalidateQueries(trpc.variable.pathFilter());
    router.push(`/w/${workspace}/variables`);
  };
  const saved = () => done(`Saved ${path}`);
  const create = useMutation(trpc.variable.create.mutationOptions({ onSuccess: saved }));
  const update = useMutation(trpc.variable.update.mutationOptions({ onSuccess: saved }));
  const save = existingPath ? update : create;
  const remove = useMutation(
    trpc.variable.delete.mutationOptions({ onSuccess: () => done(`Deleted ${existingPath}`) }),
  );
  const reveal = useMutation(
    trpc.variable.reveal.mutationOptions({
      onSuccess: (data) => {
        setValue(data.value);
        setValueTouched(true);
      },
    }),
  );
  const field = errorField(save.error);
  const fieldError = (name: string) =>
    field === name && <span className="field-error">{errorMessage(save.error)}</span>;

  function submit(event: React.FormEvent) {
    event.preventDefault();
    if (readOnly) return;
    if (existingPath) {
      update.mutate({
        workspace,
        path: existingPath,
        newPath: path !== existingPath ? path : undefined,
        value: valueTouched ? value : undefined,
        isSecret,
        description,
      });
    } else {
      create.mutate({ workspace, path, value, isSecret, description });
    }
  }

  return (
    <form onSubmit={submit}>
      <div className="toolbar">
        <h1>{existingPath ?? "New variable"}</h1>
        {readOnly ? (
          access.data && (
            <span className="muted" data-testid="read-only-note">
              You can see this variable but not change it.
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
                    description: "Scripts and resources that use this variable will no longer find it.",
                    action: "Delete variable",
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
      <div className="panel stack" style={{ maxWidth: 720 }}>
        <label>
          Path <span className="hint">u/&lt;user&gt;/&lt;name&gt; or f/&lt;folder&gt;/&lt;name&gt;</span>
          <input
            name="path"
            value={path}
            readOnly={readOnly}
            aria-invalid={field === "path"}
            onChange={(e) => setPath(e.target.value)}
          />
          {fieldError("path")}
        </label>
        <label>
          Value
          {existingPath && isSecret && !valueTouched && (
            <span className="hint">
              The secret is kept unless you type a new value.{" "}
              <a
                href="#"
                onClick={(e) => {
                  e.preventDefault();
                  reveal.mutate({ workspace, path: existingPath });
                }}
              >
                Reveal (audited)
              </a>
            </span>
          )}
          {isSecret ? (
            <input
              name="value"
              type="password"
              autoComplete="new-password"
              value={value}
              readOnly={readOnly}
              placeholder={existingPath && !valueTouched ? "••••••••" : ""}
              aria-invalid={field === "value"}
              onChange={(e) => (setValue(e.target.value), setValueTouched(true))}
            />
          ) : (
            <textarea
              name="value"
              rows={4}
              value={value}
              readOnly={readOnly}
              aria-invalid={field === "value"}
              onChange={(e) => (setValue(e.target.value), setValueTouched(true))}
            />
          )}
          {fieldError("value")}
          {reveal.error && <span className="field-error">{errorMessage(reveal.error)}</span>}
        </label>
        <label style={{ flexDirection: "row", alignItems: "center", gap: "0.5rem" }}>
          <input
            name="is_secret"
            type="checkbox"
            checked={isSecret}
            disabled={readOnly}
            onChange={(e) => setIsSecret(e.target.checked)}
          />
          Secret <span className="hint">encrypted at rest, hidden from lists, every read audited</span>
        </label>
        {fieldError("is_secret")}
        <label>
          Description
          <textarea
            name="description"
            rows={2}
            value={description}
            readOnly={readOnly}
            aria-invalid={field === "description"}
            onChange={(e) => setDescription(e.target.value)}
          />
          {fieldError("description")}
        </label>
        {save.error && !["path", "value", "description", "is_secret"].includes(field ?? "") && (
          <div className="error" role="alert">
            {errorMessage(save.error)}
          </div>
        )}
        {remove.error && <div className="error">{errorMessage(remove.error)}</div>}
      </div>
    </form>
  );
}
