import type { Language } from "./languages.ts";

/** Languages that read the same code: Bun and Deno both run TypeScript. */
export type LanguageFamily = "bash" | "python" | "typescript" | "sql";

export const FAMILY_OF: Record<Language, LanguageFamily> = {
  bash: "bash",
  python3: "python",
  bun: "typescript",
  deno: "typescript",
  postgresql: "sql",
};

export const FAMILY_LABEL: Record<LanguageFamily, string> = {
  bash: "Bash",
  python: "Python",
  typescript: "TypeScript",
  sql: "SQL",
};

type Signal = [pattern: RegExp, weight: number];

// Each pattern is a line-level construct that is a syntax error, or a different meaning, in the
// other families. Weight 3 alone is enough to name a family; weaker hints only add up.
const SIGNALS: Record<LanguageFamily, Signal[]> = {
  python: [
    [/^\s*(async\s+)?def\s+\w+\s*\(.*\)\s*(->\s*[^:]+)?:\s*(#.*)?$/m, 3],
    [/^\s*from\s+[\w.]+\s+import\s+[\w*(]/m, 3],
    [/^\s*import\s+[\w.]+(\s+as\s+\w+)?(\s*,\s*[\w.]+)*\s*$/m, 2],
    [/^if\s+__name__\s*==/m, 3],
    [/^\s*(class\s+\w+.*|elif\s.*|else|try|except.*|with\s.*|for\s.+\sin\s.+)\s*:\s*$/m, 2],
    [/\bprint\(\s*f?["']/, 1],
  ],
  typescript: [
    [/^\s*export\s+(default\s+)?(async\s+)?function\b/m, 3],
    [/^\s*import\s+.*\bfrom\s+["'][^"']+["'];?\s*$/m, 3],
    [/^\s*(const|let|var)\s+\w+(\s*:\s*[\w<>[\]|]+)?\s*=/m, 1],
    [/\bconsole\.(log|error)\(/, 2],
    [/\w+\s*:\s*(string|number|boolean|unknown|any)\b/, 1],
    [/\)\s*=>\s*[{(]?/, 1],
  ],
  bash: [
    [/^#!.*\b(ba|z|da)?sh\b/, 3],
    [/^\s*\w+=("?\$\{?\w|\$\(|"[^"]*"\s*$|'[^']*'\s*$|\S+\s*$)/m, 2],
    [/^\s*(echo|printf|export|set\s+-\w+|cd|exit|local|read)\b/m, 2],
    [/^\s*(fi|done|esac)\s*$/m, 3],
    [/;\s*(then|do)\s*$/m, 3],
    [/\$\{?[1-9A-Za-z_]\w*\}?/, 1],
  ],
  sql: [
    [
      /^\s*(select|insert\s+into|update\s+\w+\s+set|delete\s+from|create\s+(table|index|view)|with\s+\w+\s+as)\b/im,
      3,
    ],
    [/^\s*--\s*\$\d+\s+\w+/m, 2],
  ],
};

function score(content: string, family: LanguageFamily): number {
  return SIGNALS[family].reduce((sum, [pattern, weight]) => sum + (pattern.test(content) ? weight : 0), 0);
}

/**
 * The family the code most looks like, or null when nothing stands out: a cheap guess, for
 * warning an author before a run fails (`import: command not found`), never for refusing code.
 */
export function detectLanguageFamily(content: string): LanguageFamily | null {
  let best: LanguageFamily | null = null;
  let bestScore = 0;
  let tie = false;
  for (const family of Object.keys(SIGNALS) as LanguageFamily[]) {
    const each = score(content, family);
    if (each > bestScore) [best, bestScore, tie] = [family, each, false];
    else if (each === bestScore) tie = true;
  }
  return bestScore >= 3 && !tie ? best : null;
}

/**
 * Whether the code reads as another family than `language`'s: the family it looks like, when it
 * clearly does and scores more there than in its own language.
 */
export function languageMismatch(language: Language, content: string): LanguageFamily | null {
  const detected = detectLanguageFamily(content);
  const own = FAMILY_OF[language];
  if (!detected || detected === own) return null;
  return score(content, own) < score(content, detected) ? detected : null;
}
