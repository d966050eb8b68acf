// Which `results.<step>` an expression reads, found with a small JavaScript tokenizer (strings,
// template literals, comments and regular expressions are skipped, so `"results.a"` is no read).
// A read the tokenizer cannot pin to one step (`results[name]`, `Object.keys(results)`) makes the
// expression "dynamic": validation cannot check it and the evaluator passes every result.

export type ResultReferences = { steps: string[]; dynamic: boolean };

type Token = { kind: "name" | "string" | "punct" | "other"; text: string };

const NAME_START = /[A-Za-z_$\u00c0-\uffff]/;
const NAME_PART = /[\w$\u00c0-\uffff]/;
// After these a `/` starts a regular expression rather than a division.
const REGEX_AFTER_PUNCT = new Set("( , = : [ ! & | ? { } ; + - * % < > ~ ^ => ?? && ||".split(" "));
const REGEX_AFTER_NAME = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  // Open template literals: each entry is the brace depth at which its `${` began.
  const templates: number[] = [];
  let depth = 0;
  const readString = (quote: string): string => {
    let value = "";
    i++;
    while (i < source.length && source[i] !== quote) {
      if (source[i] === "\\") {
        value += source[i + 1] ?? "";
        i += 2;
      } else value += source[i++];
    }
    i++;
    return value;
  };
  // Reads template text up to the closing backquote or the next `${`.
  const readTemplate = (): void => {
    while (i < source.length) {
      const c = source[i];
      if (c === "\\") i += 2;
      else if (c === "`") {
        i++;
        tokens.push({ kind: "other", text: "`" });
        return;
      } else if (c === "$" && source[i + 1] === "{") {
        i += 2;
        templates.push(depth);
        depth++;
        tokens.push({ kind: "punct", text: "(" });
        return;
      } else i++;
    }
  };
  while (i < source.length) {
    const c = source[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "/" && source[i + 1] === "/") {
      while (i < source.length && source[i] !== "\n") i++;
    } else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      i = end === -1 ? source.length : end + 2;
    } else if (c === "'" || c === '"') {
      tokens.push({ kind: "string", text: readString(c) });
    } else if (c === "`") {
      i++;
      readTemplate();
    } else if (NAME_START.test(c)) {
      let j = i + 1;
      while (j < source.length && NAME_PART.test(source[j]!)) j++;
      tokens.push({ kind: "name", text: source.slice(i, j) });
      i = j;
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(source[i + 1] ?? ""))) {
      let j = i + 1;
      while (j < source.length && /[\w.]/.test(source[j]!)) j++;
      tokens.push({ kind: "other", text: source.slice(i, j) });
      i = j;
    } else if (c === "/") {
      const prev = tokens[tokens.length - 1];
      const regex =
        prev === undefined ||
        (prev.kind === "punct" && REGEX_AFTER_PUNCT.has(prev.text)) ||
        (prev.kind === "name" && REGEX_AFTER_NAME.has(prev.text));
      if (regex) {
        let j = i + 1;
        let inClass = false;
        while (j < source.length && (inClass || source[j] !== "/") && source[j] !== "\n") {
          if (source[j] === "\\") j++;
          else if (source[j] === "[") inClass = true;
          else if (source[j] === "]") inClass = false;
          j++;
        }
        j++;
        while (j < source.length && /[a-z]/.test(source[j]!)) j++;
        tokens.push({ kind: "other", text: source.slice(i, j) });
        i = j;
      } else {
        tokens.push({ kind: "punct", text: "/" });
        i++;
      }
    } else if (c === "?" && source[i + 1] === "." && !/[0-9]/.test(source[i + 2] ?? "")) {
      tokens.push({ kind: "punct", text: "?." });
      i += 2;
    } else if (c === "{") {
      depth++;
      tokens.push({ kind: "punct", text: c });
      i++;
    } else if (c === "}") {
      depth--;
      i++;
      if (templates.length > 0 && templates[templates.length - 1] === depth) {
        templates.pop();
        tokens.push({ kind: "punct", text: ")" });
        readTemplate();
      } else tokens.push({ kind: "punct", text: c });
    } else {
      tokens.push({ kind: "punct", text: c });
      i++;
    }
  }
  return tokens;
}

/** The steps whose results `expr` reads through `results.<id>`, `results?.<id>` or `results["id"]`. */
export function resultReferences(expr: string): ResultReferences {
  const tokens = tokenize(expr);
  const steps = new Set<string>();
  let dynamic = false;
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k]!;
    if (token.kind !== "name" || token.text !== "results") continue;
    const before = tokens[k - 1];
    // `x.results` or `{ results: … }` is some other object's property, not the results.
    if (before?.kind === "punct" && (before.text === "." || before.text === "?.")) continue;
    const next = tokens[k + 1];
    const after = tokens[k + 2];
    const isKey = before?.kind === "punct" && (before.text === "{" || before.text === ",");
    if (isKey && next?.kind === "punct" && next.text === ":") continue;
    if (next?.kind === "punct" && (next.text === "." || next.text === "?.") && after?.kind === "name") {
      steps.add(after.text);
      k += 2;
    } else if (
      next?.kind === "punct" &&
      (next.text === "[" || next.text === "?.") &&
      ((after?.kind === "string" && tokens[k + 3]?.text === "]") ||
        (next.text === "?." &&
          after?.text === "[" &&
          tokens[k + 3]?.kind === "string" &&
          tokens[k + 4]?.text === "]"))
    ) {
      const literal = after?.kind === "string" ? after.text : tokens[k + 3]!.text;
      steps.add(literal);
      k += next.text === "?." ? 4 : 3;
    } else {
      dynamic = true;
    }
  }
  return { steps: [...steps], dynamic };
}
