import { inferBashSchema } from "./bash.ts";
import { inferPythonSchema } from "./python.ts";
import { inferSqlSchema } from "./sql.ts";
import { inferTypeScriptSchema } from "./typescript.ts";
import type { Language } from "../languages.ts";
import type { ArgSchema } from "./types.ts";

export function inferSchema(language: Language, content: string): ArgSchema {
  switch (language) {
    case "bash":
      return inferBashSchema(content);
    case "python3":
      return inferPythonSchema(content);
    case "bun":
    case "deno":
      return inferTypeScriptSchema(language, content);
    case "postgresql":
      return inferSqlSchema(content);
  }
}
