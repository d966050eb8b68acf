"use client";
import { useState, type FormEvent, type HTMLAttributes, type ReactNode } from "react";
import { DataList, RowAction, type DataListProps, type DataTableAction } from "@/components/data-table";
import { errorField, errorMessage } from "@/lib/errors";

/** A named item the workspace shares out: a folder or a group. */
type Named = { name: string };

type CreateMutation = {
  mutate: (
    input: { workspace: string; name: string; summary: string | null },
    options: { onSuccess: () => void },
  ) => void;
  isPending: boolean;
  error: unknown;
};

/**
 * The folders and groups panels: a heading and what the items are for, the list as cards (each
 * with its delete button, confirmed, and its own body), and the form that creates one.
 */
export function NamedPanel<Item extends Named>({
  noun,
  title,
  intro,
  errors,
  itemProps,
  heading,
  remove,
  children,
  create,
  workspace,
  ...list
}: DataListProps<Item> & {
  /** "folder" or "group": names the create form's fields and buttons. */
  noun: string;
  title: string;
  intro: ReactNode;
  /** Errors of the actions taken on the items. */
  errors: unknown[];
  itemProps: (item: Item) => HTMLAttributes<HTMLDivElement>;
  heading: (item: Item) => ReactNode;
  /** The item's delete button, where offered. */
  remove: DataTableAction<Item>;
  children: (item: Item) => ReactNode;
  /** The create form, for those who may create. */
  create: CreateMutation | null;
  workspace: string;
}) {
  const error = errors.find(Boolean);
  return (
    <section>
      <h2>{title}</h2>
      <p className="muted">{intro}</p>
      {error ? <div className="error">{errorMessage(error)}</div> : null}
      <DataList {...list} quietLoading>
        {(shown) => (
          <div className="stack">
            {shown.map((item) => (
              <div className="panel" key={item.name} {...itemProps(item)}>
                <div className="toolbar">
                  {heading(item)}
                  {(!remove.available || remove.available(item)) && <RowAction action={remove} row={item} />}
                </div>
                {children(item)}
              </div>
            ))}
          </div>
        )}
      </DataList>
      {create && <CreateForm noun={noun} workspace={workspace} mutation={create} />}
    </section>
  );
}

function CreateForm({
  noun,
  workspace,
  mutation,
}: {
  noun: string;
  workspace: string;
  mutation: CreateMutation;
}) {
  const [name, setName] = useState("");
  const [summary, setSummary] = useState("");
  const field = errorField(mutation.error);

  function submit(event: FormEvent) {
    event.preventDefault();
    mutation.mutate(
      { workspace, name, summary: summary || null },
      {
        onSuccess: () => {
          setName("");
          setSummary("");
        },
      },
    );
  }

  return (
    <form className="panel row" onSubmit={submit} style={{ marginTop: "0.75rem" }}>
      <label>
        New {noun}
        <input
          name={`${noun}_name`}
          value={name}
          onChange={(e) => setName(e.target.value)}
          aria-invalid={field === "name"}
          required
        />
        {field === "name" && <span className="field-error">{errorMessage(mutation.error)}</span>}
      </label>
      <label>
        Summary
        <input name={`${noun}_summary`} value={summary} onChange={(e) => setSummary(e.target.value)} />
      </label>
      <button className="primary" type="submit" disabled={mutation.isPending}>
        Create {noun}
      </button>
      {mutation.error && !field ? <div className="error">{errorMessage(mutation.error)}</div> : null}
    </form>
  );
}
