import { RE2 } from "re2-wasm";

// Patterns written by users (a resource type's `pattern`/`patternProperties`) run on RE2, whose
// matching time is linear in the input: a backtracking pattern such as `(a+)+$` would otherwise
// hold a server's event loop for minutes and stall every tenant on it. RE2 does not support
// lookaround or backreferences; such a pattern is refused when its schema is compiled.
//
// re2-wasm's compiled patterns live in WebAssembly memory that the garbage collector does not
// reclaim, so each distinct pattern is compiled once and kept (patterns come from stored schemas,
// which are few and small: MAX_SCHEMA_BYTES each).
const compiled = new Map<string, RE2>();

export class UnsupportedPatternError extends Error {
  override name = "UnsupportedPatternError";
}

/** A RegExp-like `test` on RE2. `flags` must include "u" (RE2 works on code points only). */
export function linearRegExp(pattern: string, flags = "u"): { test(text: string): boolean } {
  const key = `${flags}/${pattern}`;
  let rx = compiled.get(key);
  if (!rx) {
    try {
      rx = new RE2(pattern, flags.includes("u") ? flags : `${flags}u`);
    } catch (error) {
      const why = (error as Error).message.replace(/^Invalid regular expression: \/.*\/\w*: /s, "");
      throw new UnsupportedPatternError(
        `pattern ${JSON.stringify(pattern)} is not supported (${why}): patterns run on a ` +
          "linear-time engine (RE2), without lookaround or backreferences",
      );
    }
    compiled.set(key, rx);
  }
  return rx;
}
