import { defaultTagForLanguage, type Language } from "@millrace/runtime";
import { invalidInput } from "../errors.ts";

// Tags become pg-boss queue names, so they keep to a conservative alphabet. Dynamic parts
// (`$workspace`, `$args[name]`) are resolved before a tag reaches a queue.
const TAG = /^[A-Za-z0-9_.-]{1,64}$/;
const DYNAMIC_TAG = /^(?:[A-Za-z0-9_.-]|\$workspace|\$args\[[A-Za-z0-9_]+\])+$/;

export function validateTag(tag: string, field: string): void {
  if (tag.length > 128 || !DYNAMIC_TAG.test(tag)) {
    throw invalidInput(
      field,
      `"${tag}" is not a valid tag (letters, digits, _ . -, $workspace, $args[name])`,
    );
  }
}

/** Resolves `$workspace` and `$args[name]` at enqueue time, as Windmill does. */
export function resolveTag(
  tag: string,
  workspaceId: string,
  args: Record<string, unknown>,
  field = "tag",
): string {
  const resolved = tag
    .replaceAll("$workspace", workspaceId)
    .replace(/\$args\[([A-Za-z0-9_]+)\]/g, (_, name: string) => String(args[name] ?? ""));
  if (!TAG.test(resolved))
    throw invalidInput(field, `tag "${tag}" resolves to "${resolved}", which is not a valid tag`);
  return resolved;
}

export function tagForRunnable(explicitTag: string | null | undefined, language: Language): string {
  return explicitTag || defaultTagForLanguage(language);
}
