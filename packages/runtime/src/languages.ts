export type Language = "bash" | "python3" | "bun" | "deno" | "postgresql";

export const LANGUAGES: readonly Language[] = Object.freeze(["bash", "python3", "bun", "deno", "postgresql"]);

export function isLanguage(value: string): value is Language {
  return (LANGUAGES as readonly string[]).includes(value);
}

// Single source of truth for the tags a default worker listens on.
export const DEFAULT_TAGS: readonly string[] = Object.freeze([...LANGUAGES, "flow", "dependency", "other"]);

export function defaultTagForLanguage(language: Language): string {
  return language;
}
