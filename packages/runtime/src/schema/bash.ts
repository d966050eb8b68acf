import { positionalSchema } from "./positional.ts";
import type { PositionalParam } from "./positional.ts";
import type { ArgSchema } from "./types.ts";

// name="$1" | name=$1 | name="${1}" | name="${1:-default}" | name=${1-default}, optionally exported/declared.
const ASSIGNMENT =
  /^\s*(?:(?:export|declare|typeset|readonly)\s+(?:-\w+\s+)?)?([A-Za-z_][A-Za-z0-9_]*)=(?:"\$(\d)"|\$(\d)(?=\s|;|$)|"\$\{(\d+)\}"|\$\{(\d+)\}|"\$\{(\d+):?-([^"]*)\}"|\$\{(\d+):?-([^}\s]*)\})\s*(?:;.*|#.*)?$/;

export function inferBashSchema(content: string): ArgSchema {
  const params: PositionalParam[] = [];
  const lines = content.split(/\r?\n/);
  lines.forEach((text, index) => {
    const m = ASSIGNMENT.exec(text);
    if (!m) return;
    const name = m[1] as string;
    const position = Number(m[2] ?? m[3] ?? m[4] ?? m[5] ?? m[6] ?? m[8]);
    const fallback = m[7] ?? m[9];
    params.push({
      name,
      position,
      line: index + 1,
      required: fallback === undefined,
      property:
        fallback === undefined
          ? { type: "string", description: "" }
          : { type: "string", description: "", default: fallback },
    });
  });
  return positionalSchema("bash", params);
}
