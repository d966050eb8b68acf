import { SignatureError, buildSchema } from "./types.ts";
import type { ArgSchema, InferredParam } from "./types.ts";

export interface PositionalParam extends InferredParam {
  position: number;
  line: number;
}

/**
 * Bash and SQL scripts receive arguments by position and the executor passes them in schema order,
 * so positions must be exactly 1..n: a gap would silently shift every later argument.
 */
export function positionalSchema(language: string, params: PositionalParam[]): ArgSchema {
  const byPosition = new Map<number, PositionalParam>();
  const names = new Set<string>();
  for (const p of params) {
    if (byPosition.has(p.position)) continue;
    if (names.has(p.name)) {
      throw new SignatureError(
        `${language}: argument \`${p.name}\` is bound to two positions (line ${p.line})`,
      );
    }
    byPosition.set(p.position, p);
    names.add(p.name);
  }
  const sorted = [...byPosition.values()].sort((a, b) => a.position - b.position);
  sorted.forEach((p, i) => {
    if (p.position !== i + 1) {
      throw new SignatureError(
        `${language}: positional argument $${i + 1} is never named, but $${p.position} (\`${p.name}\`, line ${p.line}) is`,
      );
    }
  });
  return buildSchema(sorted);
}
