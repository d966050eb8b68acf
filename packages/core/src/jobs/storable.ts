// What a job prints or returns is stored whatever bytes it holds. PostgreSQL refuses NUL in text
// and jsonb, and lone UTF-16 surrogates in jsonb (a JS string may hold one; JSON.stringify writes
// it as an escape): either made a completion fail forever, leaving its job `running`.

const REPLACEMENT = "\uFFFD";

const UNSTORABLE_TEXT = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text PostgreSQL accepts: NUL and lone surrogates become U+FFFD. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE_TEXT, REPLACEMENT);
}

// In JSON.stringify's output: an escaped NUL, or an escaped surrogate (JSON.stringify escapes only
// lone ones; a pair is written as the character itself).
const UNSTORABLE_JSON = /\\u0000|\\ud[89a-f]/i;

function storableValue(value: unknown): unknown {
  if (typeof value === "string") return storableText(value);
  if (Array.isArray(value)) return value.map(storableValue);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[storableText(key)] = storableValue(inner);
    return out;
  }
  return value;
}

/** JSON text jsonb accepts, for any JSON-serializable value (strings and keys cleaned as above). */
export function storableJson(value: unknown): string {
  const json = JSON.stringify(value ?? null) ?? "null";
  return UNSTORABLE_JSON.test(json) ? JSON.stringify(storableValue(JSON.parse(json))) : json;
}
