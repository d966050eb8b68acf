"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { toast } from "sonner";
import type { LargeFileStorage, ObjectStorageView, StorageSetting } from "@millrace/core";
import { Button } from "@/components/ui/button";
import { useConfirm } from "@/components/ui/confirm";
import Link from "@/components/ui/link";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

interface Row {
  /** A stable key for React while the name is being typed. */
  id: number;
  name: string;
  resource: string;
  publicResource: boolean;
}

interface FormValues {
  resource: string;
  publicResource: boolean;
  secondary: Row[];
}

const PRIMARY_FIELD = "large_file_storage.s3_resource_path";
const secondaryField = (name: string) => `large_file_storage.secondary_storage.${name}.s3_resource_path`;

let nextRow = 0;

/** `$res:f/data/s3` → `f/data/s3`: the select's value. */
function bare(path: string): string {
  return path.startsWith("$res:") ? path.slice("$res:".length) : path;
}

function initialValues(setting: LargeFileStorage | null): FormValues {
  return {
    resource: setting ? bare(setting.s3_resource_path) : "",
    publicResource: setting?.public_resource === true,
    secondary: Object.entries(setting?.secondary_storage ?? {}).map(([name, storage]) => ({
      id: nextRow++,
      name,
      resource: bare(storage.s3_resource_path),
      publicResource: storage.public_resource === true,
    })),
  };
}

function storageValue(resource: string, publicResource: boolean): StorageSetting {
  return {
    type: "S3Storage",
    // Empty: the server refuses it naming the field ("is required").
    s3_resource_path: resource ? `$res:${resource}` : "",
    ...(publicResource ? { public_resource: true } : {}),
  };
}

/** The form as Windmill's large_file_storage value (null: no storage). */
function settingOf(values: FormValues): LargeFileStorage | null {
  if (!values.resource && values.secondary.length === 0) return null;
  const secondary = Object.fromEntries(
    values.secondary.map((row) => [row.name.trim(), storageValue(row.resource, row.publicResource)]),
  );
  return {
    ...storageValue(values.resource, values.publicResource),
    ...(values.secondary.length > 0 ? { secondary_storage: secondary } : {}),
  };
}

function FieldError({ field, error }: { field: string; error: unknown }) {
  if (!error || errorField(error) !== field) return null;
  return (
    <span className="field-error" role="alert">
      {errorMessage(error)}
    </span>
  );
}

function ResourceSelect({
  label,
  value,
  options,
  invalid,
  onChange,
}: {
  label: string;
  value: string;
  options: { path: string; description: string }[];
  invalid: boolean;
  onChange: (value: string) => void;
}) {
  const known = options.some((o) => o.path === value);
  return (
    <select
      aria-label={label}
      value={value}
      aria-invalid={invalid}
      onChange={(e) => onChange(e.target.value)}
    >
      <option value="">Choose an s3 resource…</option>
      {value && !known && <option value={value}>{value} (not an s3 resource you can read)</option>}
      {options.map((o) => (
        <option key={o.path} value={o.path}>
          {o.description ? `${o.path} — ${o.description}` : o.path}
        </option>
      ))}
    </select>
  );
}

/**
 * The admin's form. Its values come from the setting once (and again after a save or a removal).
 * "Test connection" tests the form as it is, so a storage can be tried before it is saved.
 */
export function ObjectStorageForm({ workspace, view }: { workspace: string; view: ObjectStorageView }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const confirm = useConfirm();
  const [values, setValues] = useState<FormValues>(() => initialValues(view.setting));
  const set = <K extends keyof FormValues>(key: K, value: FormValues[K]) =>
    setValues((current) => ({ ...current, [key]: value }));
  const setRow = (id: number, change: Partial<Row>) =>
    set(
      "secondary",
      values.secondary.map((row) => (row.id === id ? { ...row, ...change } : row)),
    );
  const resources = view.s3Resources ?? [];

  const onSaved = (next: ObjectStorageView) => {
    setValues(initialValues(next.setting));
    queryClient.setQueryData(trpc.objectStorage.get.queryKey({ workspace }), next);
  };
  const save = useMutation(
    trpc.objectStorage.save.mutationOptions({
      onSuccess: (next) => {
        onSaved(next);
        toast.success(`Object storage of ${workspace} saved`);
      },
    }),
  );
  const remove = useMutation(
    trpc.objectStorage.save.mutationOptions({
      onSuccess: (next) => {
        onSaved(next);
        save.reset();
        test.reset();
        toast.success(`${workspace} has no object storage any more`);
      },
    }),
  );
  const test = useMutation(trpc.objectStorage.test.mutationOptions());

  const saved = JSON.stringify(settingOf(initialValues(view.setting)));
  const dirty = JSON.stringify(settingOf(values)) !== saved;
  const testedStorage = test.variables?.storage;
  // An answer about settings since edited would vouch for what was not tested.
  const testedAsShown = JSON.stringify(test.variables?.setting) === JSON.stringify(settingOf(values));
  /** The test's answer for one storage (undefined: the primary). */
  const testResult = (storage: string | undefined, field: string) => {
    if (testedStorage !== storage || test.isIdle || !testedAsShown) return null;
    if (test.isPending) return <span className="muted">Testing…</span>;
    if (test.isSuccess)
      return (
        <span className="status status-success" role="status" data-testid="test-result">
          Connection works: a test object was written to {test.data.bucket} and deleted
        </span>
      );
    if (errorField(test.error) === field || !errorField(test.error))
      return (
        <span className="field-error" role="alert" data-testid="test-result">
          {errorMessage(test.error)}
        </span>
      );
    return null;
  };
  const runTest = (storage?: string) => {
    save.reset();
    test.mutate({ workspace, setting: settingOf(values), ...(storage ? { storage } : {}) });
  };
  const fieldless = save.error && !errorField(save.error);

  return (
    <form
      className="panel stack"
      aria-label="Object storage settings"
      onSubmit={(event) => {
        event.preventDefault();
        remove.reset();
        test.reset();
        save.mutate({ workspace, large_file_storage: settingOf(values) });
      }}
    >
      <label>
        S3 resource
        <span className="hint">
          The bucket and its credentials, as an <code>s3</code> resource (bucket, region, endPoint, accessKey,
          secretKey). {resources.length === 0 ? "This workspace has none yet: " : "Another one: "}
          <Link href={`/w/${workspace}/resources/new`}>create a resource</Link> of type <code>s3</code>.
        </span>
        <ResourceSelect
          label="S3 resource"
          value={values.resource}
          options={resources}
          invalid={errorField(save.error) === PRIMARY_FIELD || errorField(test.error) === PRIMARY_FIELD}
          onChange={(resource) => set("resource", resource)}
        />
        <FieldError field={PRIMARY_FIELD} error={save.error} />
        {testResult(undefined, PRIMARY_FIELD)}
      </label>

      <label style={{ flexDirection: "row", alignItems: "flex-start" }}>
        <input
          type="checkbox"
          role="switch"
          name="public_resource"
          aria-checked={values.publicResource}
          checked={values.publicResource}
          onChange={(e) => set("publicResource", e.target.checked)}
        />
        <span>
          Public
          <span className="hint" style={{ display: "block" }}>
            Off: only those who may read the resource use the storage. On: every member of {workspace} uses
            it, with the rights of the admin who saved it (you, once you save), and every member can read its
            credentials (through <code>s3_resource_info</code>, as on Windmill).
          </span>
        </span>
      </label>
      <FieldError field="large_file_storage.public_resource" error={save.error} />

      <fieldset className="stack" style={{ border: "1px solid var(--line)", borderRadius: 6 }}>
        <legend>Secondary storages</legend>
        <span className="hint">
          More buckets under names: jobs pick one by name (<code>storage</code> in the clients&apos; S3
          objects).
        </span>
        {values.secondary.map((row, index) => {
          const name = row.name.trim();
          const field = secondaryField(name);
          return (
            <div key={row.id} className="stack" style={{ gap: "0.25rem" }} data-testid="secondary-storage">
              <div className="row" style={{ alignItems: "flex-end" }}>
                <label>
                  Name
                  <input
                    aria-label={`Name of secondary storage ${index + 1}`}
                    value={row.name}
                    placeholder="archive"
                    aria-invalid={errorField(save.error) === "large_file_storage.secondary_storage"}
                    onChange={(e) => setRow(row.id, { name: e.target.value })}
                  />
                </label>
                <label>
                  Resource
                  <ResourceSelect
                    label={`Resource of secondary storage ${index + 1}`}
                    value={row.resource}
                    options={resources}
                    invalid={errorField(save.error) === field || errorField(test.error) === field}
                    onChange={(resource) => setRow(row.id, { resource })}
                  />
                </label>
                <label style={{ flexDirection: "row", fontWeight: 400 }}>
                  <input
                    type="checkbox"
                    checked={row.publicResource}
                    onChange={(e) => setRow(row.id, { publicResource: e.target.checked })}
                  />
                  Public
                </label>
                <Button
                  size="sm"
                  disabled={!name || !row.resource || test.isPending}
                  title={name && row.resource ? undefined : "Name it and choose its resource first"}
                  onClick={() => runTest(name)}
                >
                  Test
                </Button>
                <Button
                  size="sm"
                  variant="ghost"
                  aria-label={`Remove secondary storage ${name || index + 1}`}
                  onClick={() =>
                    set(
                      "secondary",
                      values.secondary.filter((r) => r.id !== row.id),
                    )
                  }
                >
                  Remove
                </Button>
              </div>
              <FieldError field={field} error={save.error} />
              {testResult(name, field)}
            </div>
          );
        })}
        <FieldError field="large_file_storage.secondary_storage" error={save.error} />
        <div>
          <Button
            size="sm"
            onClick={() =>
              set("secondary", [
                ...values.secondary,
                { id: nextRow++, name: "", resource: "", publicResource: false },
              ])
            }
          >
            Add a secondary storage
          </Button>
        </div>
      </fieldset>

      {fieldless && <div className="error">{errorMessage(save.error)}</div>}
      {remove.error && <div className="error">{errorMessage(remove.error)}</div>}
      <div className="row" style={{ alignItems: "center" }}>
        <Button variant="primary" type="submit" disabled={save.isPending || !dirty}>
          {save.isPending ? "Saving…" : "Save"}
        </Button>
        <Button
          disabled={!values.resource || test.isPending}
          title={
            values.resource
              ? "Tests the storage as entered here, saved or not"
              : "Choose an s3 resource first"
          }
          onClick={() => runTest()}
        >
          Test connection
        </Button>
        {view.setting && (
          <Button
            variant="destructive"
            disabled={remove.isPending}
            onClick={async () => {
              const confirmed = await confirm({
                title: `Remove the object storage of ${workspace}?`,
                description:
                  "Jobs can no longer use it through the workspace storage. The bucket and its files are not touched.",
                action: "Remove storage",
                destructive: true,
              });
              if (confirmed) remove.mutate({ workspace, large_file_storage: null });
            }}
          >
            Remove storage
          </Button>
        )}
        {dirty && view.setting && <span className="muted">Unsaved changes</span>}
      </div>
    </form>
  );
}

/** What a member who is not an admin sees: the setting, without a way to change it. */
export function ObjectStorageReadOnly({ view }: { view: ObjectStorageView }) {
  const setting = view.setting;
  if (!setting)
    return (
      <div className="panel empty">This workspace has no object storage. An admin can set one here.</div>
    );
  const rows: [string, StorageSetting][] = [
    ["(primary)", setting],
    ...Object.entries(setting.secondary_storage ?? {}),
  ];
  return (
    <section className="panel stack" aria-label="Object storage settings">
      <p className="muted" style={{ margin: 0 }}>
        Only admins change it. A public storage is used by every member with the rights of{" "}
        {view.configuredBy ?? "the admin who saved it"}; a private one only by those who may read its
        resource.
      </p>
      <table aria-label="Storages">
        <thead>
          <tr>
            <th>Storage</th>
            <th>S3 resource</th>
            <th>Access</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([name, storage]) => (
            <tr key={name}>
              <td>{name}</td>
              <td>
                <code>{bare(storage.s3_resource_path)}</code>
              </td>
              <td>
                {storage.public_resource ? "public: every member" : "private: who may read the resource"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
