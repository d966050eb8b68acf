import { tokenizeShell } from "./bash-tokens.ts";
import type { ShellToken } from "./bash-tokens.ts";
import { positionalSchema } from "./positional.ts";
import type { PositionalParam } from "./positional.ts";
import type { ArgSchema } from "./types.ts";

// Bash scripts take their arguments by position; Windmill names them by the variables they are
// assigned to at the top level of the script:
//   name="$1"  name=$1  name="${1}"  name="${1:-default}"  name=${1-default}  export name="$2"
// An assignment inside a function body, or as the environment prefix of a command (`x=$1 cmd`),
// does not name an argument. A default that is not static text (`${1:-$HOME}`) makes the argument
// optional without a default value. All bash arguments are strings.

/** A piece of a word, as the shell expands it. */
type Part =
  | { kind: "text"; text: string }
  | { kind: "param"; name: string; op: string | null; word: string; quoted: boolean }
  | { kind: "dynamic" };

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=/;
const DECLARATION = new Set(["export", "readonly", "declare", "typeset"]);
// After these reserved words (and after an operator or a newline) a new command starts.
const COMMAND_PREFIX = new Set(["then", "do", "else", "elif", "if", "while", "until", "!", "time"]);
const DIGITS = /^\d+$/;

/**
 * How quotes read in a piece of text: a plain word; the inside of "…"; or the default of a
 * `"${1:-…}"`, where bash lets double quotes nest but keeps single quotes as text.
 */
type Context = "word" | "double" | "default-in-double";

/** Splits a word into literal text and expansions. */
function wordParts(word: string, context: Context = "word"): Part[] {
  const quoted = context !== "word";
  const parts: Part[] = [];
  const text = (t: string) => {
    const last = parts[parts.length - 1];
    if (last?.kind === "text") last.text += t;
    else parts.push({ kind: "text", text: t });
  };
  let i = 0;
  while (i < word.length) {
    const ch = word[i] as string;
    if (ch === "\\") {
      const next = word[i + 1] ?? "";
      // Inside double quotes a backslash only escapes $ ` " \ and newline.
      if (quoted && !'$`"\\\n'.includes(next)) text("\\" + next);
      else if (next !== "\n") text(next);
      i += 2;
    } else if (ch === "'" && !quoted) {
      const end = word.indexOf("'", i + 1);
      text(word.slice(i + 1, end));
      i = end + 1;
    } else if (ch === '"' && context !== "double") {
      const end = closingQuote(word, i + 1);
      parts.push(...wordParts(word.slice(i + 1, end), "double"));
      if (end === i + 1) text("");
      i = end + 1;
    } else if (ch === "$") {
      const [part, end] = expansion(word, i, quoted);
      parts.push(part);
      i = end;
    } else if (ch === "`") {
      parts.push({ kind: "dynamic" });
      i = skipTo(word, i + 1, "`");
    } else {
      text(ch);
      i++;
    }
  }
  return parts;
}

function closingQuote(word: string, from: number): number {
  let i = from;
  while (i < word.length && word[i] !== '"') {
    if (word[i] === "\\") i += 2;
    else if (word[i] === "$" && (word[i + 1] === "{" || word[i + 1] === "(")) i = expansion(word, i, true)[1];
    else if (word[i] === "`") i = skipTo(word, i + 1, "`");
    else i++;
  }
  return i;
}

function skipTo(word: string, from: number, close: string): number {
  let i = from;
  while (i < word.length && word[i] !== close) i += word[i] === "\\" ? 2 : 1;
  return i + 1;
}

/** Index just past the `close` matching the bracket opened before `from` (quotes respected). */
function matching(word: string, from: number, open: string, close: string): number {
  let depth = 1;
  let i = from;
  while (i < word.length) {
    const ch = word[i];
    if (ch === "\\") i += 2;
    else if (ch === "'" && open === "(") i = word.indexOf("'", i + 1) + 1;
    else if (ch === '"') i = closingQuote(word, i + 1) + 1;
    else if (ch === "$" && (word[i + 1] === "{" || word[i + 1] === "(")) i = expansion(word, i, false)[1];
    else {
      if (ch === open) depth++;
      else if (ch === close && --depth === 0) return i + 1;
      i++;
    }
  }
  return word.length;
}

/** Parses the expansion at `word[i] === "$"`; returns it and the index just past it. */
function expansion(word: string, i: number, quoted: boolean): [Part, number] {
  const next = word[i + 1] ?? "";
  if (next === "{") {
    const end = matching(word, i + 2, "{", "}");
    const body = word.slice(i + 2, end - 1);
    const m = /^([A-Za-z_][A-Za-z0-9_]*|\d+|[@*#?$!-])(:?[-=?+]|:|##?|%%?|\/\/?)?/s.exec(body);
    if (!m) return [{ kind: "dynamic" }, end];
    return [
      { kind: "param", name: m[1] as string, op: m[2] ?? null, word: body.slice(m[0].length), quoted },
      end,
    ];
  }
  if (next === "(") return [{ kind: "dynamic" }, matching(word, i + 2, "(", ")")];
  if (/\d/.test(next) || ("@*#?$!-".includes(next) && next !== "")) {
    return [{ kind: "param", name: next, op: null, word: "", quoted }, i + 2];
  }
  const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(word.slice(i + 1));
  if (name) return [{ kind: "param", name: name[0], op: null, word: "", quoted }, i + 1 + name[0].length];
  return [{ kind: "text", text: "$" }, i + 1];
}

/** The static text of a word, or null if it expands anything. */
function staticText(parts: Part[]): string | null {
  let out = "";
  for (const p of parts) {
    if (p.kind !== "text") return null;
    out += p.text;
  }
  return out;
}

interface Binding {
  position: number;
  /** undefined: required; null: optional with a default only known at run time. */
  fallback: string | null | undefined;
}

/** `"$1"`, `${2:-x}`, …: the positional argument a whole assignment value stands for. */
function positionalBinding(value: string): Binding | null {
  const parts = wordParts(value).filter((p) => !(p.kind === "text" && p.text === ""));
  const only = parts[0];
  if (parts.length !== 1 || only?.kind !== "param" || !DIGITS.test(only.name)) return null;
  const position = Number(only.name);
  if (position === 0) return null;
  // `${1:?message}` fails the script when $1 is missing: a required argument.
  if (only.op === null) return only.word === "" ? { position, fallback: undefined } : null;
  if (only.op === ":?" || only.op === "?") return { position, fallback: undefined };
  if (only.op !== ":-" && only.op !== "-") return null;
  return { position, fallback: staticText(wordParts(only.word, only.quoted ? "default-in-double" : "word")) };
}

interface Frame {
  function: boolean;
}

export function inferBashSchema(content: string): ArgSchema {
  const tokens = tokenizeShell(content);
  const params: PositionalParam[] = [];
  const frames: Frame[] = [];
  let commandStart = true;
  let functionHeader = false;
  const inFunction = () => frames.some((f) => f.function);

  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as ShellToken;
    if (t.kind !== "word") {
      commandStart =
        t.kind === "newline" || !["<", ">", ">>", "<<<", "<&", ">&", "<>", ">|", "&>"].includes(t.text);
      continue;
    }
    if (!commandStart) continue;
    commandStart = false;
    if (COMMAND_PREFIX.has(t.text)) {
      commandStart = true;
    } else if (t.text === "{") {
      frames.push({ function: functionHeader });
      functionHeader = false;
      commandStart = true;
    } else if (t.text === "}") {
      frames.pop();
    } else if (t.text === "function") {
      functionHeader = true;
      i++;
      if (tokens[i + 1]?.kind === "op" && tokens[i + 1]?.text === "(" && tokens[i + 2]?.text === ")") i += 2;
      commandStart = true;
    } else if (tokens[i + 1]?.text === "(" && tokens[i + 2]?.text === ")" && tokens[i + 1]?.kind === "op") {
      // name() { … }
      functionHeader = true;
      i += 2;
      commandStart = true;
    } else {
      i = assignments(tokens, i, inFunction(), params) - 1;
    }
  }
  return positionalSchema("bash", params);
}

/**
 * Reads the simple command starting at `start` and records its argument assignments (when it is a
 * plain assignment or a declaration, outside functions). Returns the index of the first token after it.
 */
function assignments(
  tokens: ShellToken[],
  start: number,
  inFunction: boolean,
  out: PositionalParam[],
): number {
  let i = start;
  const first = tokens[i] as ShellToken & { kind: "word" };
  const declaration = DECLARATION.has(first.text) || first.text === "local";
  if (declaration) {
    i++;
    while (tokens[i]?.kind === "word" && (tokens[i] as { text: string }).text.startsWith("-")) i++;
  }
  const found: PositionalParam[] = [];
  let command = false;
  for (; i < tokens.length; i++) {
    const t = tokens[i] as ShellToken;
    if (t.kind !== "word") break;
    const m = command ? null : ASSIGNMENT.exec(t.text);
    if (!m) {
      // `x=$1 cmd`: an environment prefix for cmd, not a script variable.
      if (!declaration) command = true;
      continue;
    }
    const binding = positionalBinding(t.text.slice(m[0].length));
    if (!binding) continue;
    found.push({
      name: m[1] as string,
      position: binding.position,
      line: t.line,
      required: binding.fallback === undefined,
      property:
        typeof binding.fallback === "string"
          ? { type: "string", description: "", default: binding.fallback }
          : { type: "string", description: "" },
    });
  }
  if (!command && !inFunction && first.text !== "local") out.push(...found);
  return Math.max(i, start + 1);
}
