import { invalidInput } from "../errors.ts";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A webhook call's arguments, from its body, as in Windmill: a JSON object is the args; any other
 * JSON value, or a body that is not JSON at all (text, form, XML…), is passed as `{ body }` so the
 * script receives it untouched. A body declared as JSON must parse.
 */
export function webhookArgs(contentType: string | null, raw: string): Record<string, unknown> {
  if (!raw.trim()) return {};
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  const declaredJson = type === "application/json" || type.endsWith("+json");
  if (declaredJson || type === "") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      if (declaredJson) throw invalidInput("body", "not valid JSON");
      return { body: raw };
    }
    return isObject(parsed) ? parsed : { body: parsed };
  }
  return { body: raw };
}
