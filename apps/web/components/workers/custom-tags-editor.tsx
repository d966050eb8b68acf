"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { toast } from "sonner";
import { useEffect, useState } from "react";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

function lines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
}

/** Superadmin editor of the `custom_tags` instance setting, one tag per line. */
export function CustomTagsEditor({ setting }: { setting: string[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const stored = setting.join("\n");
  const [text, setText] = useState(stored);
  const [saved, setSaved] = useState(false);
  // Follows the stored value when it changes (a save here or elsewhere), not on every refetch.
  useEffect(() => setText(stored), [stored]);
  const save = useMutation(
    trpc.worker.setCustomTags.mutationOptions({
      onSuccess: async () => {
        setSaved(true);
        toast.success("Saved the custom tags");
        await queryClient.invalidateQueries(trpc.worker.customTags.queryFilter());
      },
    }),
  );
  const field = errorField(save.error);
  return (
    <form
      className="stack"
      aria-label="Custom tags"
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate({ value: lines(text) });
      }}
    >
      <label>
        <span>
          Custom tags{" "}
          <span className="hint">
            one per line: <code>gpu</code> for every workspace, <code>gpu(ws1+ws2)</code> only those,{" "}
            <code>gpu(^ws3)</code> all but ws3
          </span>
        </span>
        <textarea
          name="custom_tags"
          rows={Math.max(3, lines(text).length + 1)}
          value={text}
          aria-invalid={!!save.error}
          onChange={(e) => {
            setText(e.target.value);
            setSaved(false);
          }}
        />
        {save.error && (
          <span className="field-error" data-field={field}>
            {errorMessage(save.error)}
          </span>
        )}
      </label>
      <div className="row">
        <button className="primary" type="submit" disabled={save.isPending}>
          {save.isPending ? "Saving…" : "Save custom tags"}
        </button>
        {saved && <span className="muted">Saved: enqueues everywhere follow it within two seconds.</span>}
      </div>
    </form>
  );
}
