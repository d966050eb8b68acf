// The REST endpoints Windmill's own clients call, read from the installed clients (never from
// memory): windmill-client 1.818's exported functions and windmill-cli 1.819's commands. Both
// bundle Windmill's OpenAPI-generated services (one function per operation: method + path); this
// module walks each bundle's call graph from its entry points (the client's exported functions, the
// CLI's command objects) to the services they reach, plus the few URLs they build by hand for
// `fetch`. Static reading only: nothing of the clients runs here.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const clientDir = path.join(root, "node_modules/windmill-client/dist");
const cliMain = path.join(root, "node_modules/windmill-cli/esm/main.js");

export interface ClientEndpoint {
  method: string;
  /** Windmill's path under /api, with `{name}` parameters: `/w/{workspace}/scripts/get/p/{path}`. */
  path: string;
  /** Windmill's operationId (the generated service function's name). */
  operationId: string;
  /** Who calls it: `wmill <command>` and `windmill-client <function>`. */
  callers: string[];
  /** null when in scope, else why not (apps, triggers, datatables…). */
  outOfScope: string | null;
}

export interface ServiceOperation {
  operationId: string;
  method: string;
  path: string;
  /** The query parameter names the generated function sends. */
  query: string[];
  hasBody: boolean;
}

/** Every operation of windmill-client's generated services (`XService.op` → method and path). */
export function clientServiceOperations(): Map<string, ServiceOperation & { service: string }> {
  const source = fs.readFileSync(path.join(clientDir, "services.gen.mjs"), "utf8");
  const ops = new Map<string, ServiceOperation & { service: string }>();
  const classRe = /var (\w+Service) = class \{([\s\S]*?)\n\};/g;
  for (const cls of source.matchAll(classRe)) {
    const service = cls[1]!;
    const opRe = /static (\w+)\([^)]*\) \{\s*return request\(OpenAPI, \{([\s\S]*?)\n\t\t\}\);/g;
    for (const op of cls[2]!.matchAll(opRe)) {
      const body = op[2]!;
      const method = /method: "(\w+)"/.exec(body)?.[1];
      const url = /url: "([^"]+)"/.exec(body)?.[1];
      if (!method || !url) continue;
      const queryBlock = /query: \{([^}]*)\}/.exec(body)?.[1] ?? "";
      const query = [...queryBlock.matchAll(/(\w+): data\./g)].map((m) => m[1]!);
      ops.set(`${service}.${op[1]!}`, {
        service,
        operationId: op[1]!,
        method,
        path: url,
        query,
        hasBody: /body: data\.|formData:/.test(body),
      });
    }
  }
  return ops;
}

interface Graph {
  /** Top-level name → the top-level names its definition mentions. */
  refs: Map<string, Set<string>>;
  /** Top-level name → the text of its definition (for the hand-built fetch URLs). */
  text: Map<string, string>;
  /** Property accesses `X.y` per top-level name (windmill-client calls `XService.op(...)`). */
  members: Map<string, Set<string>>;
}

/** The call graph of a bundle's top-level names, by identifier mention. */
export function topLevelGraph(file: string, source: string): Graph {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
  const refs = new Map<string, Set<string>>();
  const text = new Map<string, string>();
  const members = new Map<string, Set<string>>();
  const add = (name: string, node: ts.Node) => {
    const mentioned = refs.get(name) ?? new Set<string>();
    const accessed = members.get(name) ?? new Set<string>();
    // Names declared inside the definition (parameters, locals, inner functions) are its own, not
    // the top-level ones they may shadow: a bundle reuses short names (`del`, `command`) freely.
    const local = new Set<string>();
    const declare = (binding: ts.BindingName | undefined) => {
      if (!binding) return;
      if (ts.isIdentifier(binding)) local.add(binding.text);
      else
        for (const element of binding.elements) if (!ts.isOmittedExpression(element)) declare(element.name);
    };
    const collect = (n: ts.Node) => {
      if (ts.isVariableDeclaration(n) || ts.isParameter(n) || ts.isBindingElement(n)) declare(n.name);
      else if (
        (ts.isFunctionDeclaration(n) ||
          ts.isFunctionExpression(n) ||
          ts.isClassDeclaration(n) ||
          ts.isClassExpression(n)) &&
        n !== node &&
        n.name
      )
        local.add(n.name.text);
      ts.forEachChild(n, collect);
    };
    collect(node);
    const visit = (n: ts.Node) => {
      if (ts.isIdentifier(n) && local.has(n.text)) {
        // a local name
      } else if (ts.isIdentifier(n)) {
        const parent = n.parent;
        const isMemberName =
          (ts.isPropertyAccessExpression(parent) && parent.name === n) ||
          (ts.isPropertyAssignment(parent) && parent.name === n) ||
          (ts.isMethodDeclaration(parent) && parent.name === n);
        if (!isMemberName) mentioned.add(n.text);
      } else if (ts.isPropertyAccessExpression(n) && ts.isIdentifier(n.expression)) {
        accessed.add(`${n.expression.text}.${n.name.text}`);
      }
      ts.forEachChild(n, visit);
    };
    visit(node);
    refs.set(name, mentioned);
    members.set(name, accessed);
    text.set(name, (text.get(name) ?? "") + node.getText(sf));
  };
  const assignment = (statement: ts.Statement) => {
    if (
      ts.isExpressionStatement(statement) &&
      ts.isBinaryExpression(statement.expression) &&
      statement.expression.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isIdentifier(statement.expression.left)
    ) {
      add(statement.expression.left.text, statement.expression.right);
    }
  };
  const statement = (s: ts.Statement) => {
    if (ts.isFunctionDeclaration(s) && s.name) add(s.name.text, s);
    else if (ts.isClassDeclaration(s) && s.name) add(s.name.text, s);
    else if (ts.isVariableStatement(s)) {
      for (const decl of s.declarationList.declarations) {
        if (!ts.isIdentifier(decl.name) || !decl.initializer) continue;
        const init = decl.initializer;
        // Bun's lazy module bodies: `var init_x = __esm(() => { a = ...; b = ...; })`.
        if (
          ts.isCallExpression(init) &&
          ts.isIdentifier(init.expression) &&
          init.expression.text === "__esm" &&
          init.arguments[0] &&
          (ts.isArrowFunction(init.arguments[0]) || ts.isFunctionExpression(init.arguments[0])) &&
          ts.isBlock(init.arguments[0].body)
        ) {
          for (const inner of init.arguments[0].body.statements) {
            if (ts.isFunctionDeclaration(inner) || ts.isVariableStatement(inner)) statement(inner);
            else assignment(inner);
          }
        } else add(decl.name.text, init);
      }
    } else assignment(s);
  };
  for (const s of sf.statements) statement(s);
  return { refs, text, members };
}

/** Every top-level name reachable from `roots` (module initialisers `init_*` left aside). */
function reachable(graph: Graph, roots: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const stack = [...roots];
  while (stack.length) {
    const name = stack.pop()!;
    if (seen.has(name) || name.startsWith("init_") || !graph.refs.has(name)) continue;
    seen.add(name);
    for (const next of graph.refs.get(name)!) if (!seen.has(next)) stack.push(next);
  }
  return seen;
}

/**
 * URLs a function builds by hand for `fetch`: `${...}/w/${workspace}/jobs/run/p/${path}` becomes
 * `/w/{}/jobs/run/p/{}`, matched against the services' paths for method and operationId.
 */
function handBuiltPaths(code: string): string[] {
  const found: string[] = [];
  for (const m of code.matchAll(/`([^`]*\/w\/\$\{[^`]*)`/g)) {
    const raw = m[1]!.slice(m[1]!.indexOf("/w/${"));
    const normalized = raw
      .replace(/\?.*$/, "")
      .replace(/\$\{[^}]*\}/g, "{}")
      .replace(/\/+$/, "");
    found.push(normalized);
  }
  return found;
}

function skeleton(windmillPath: string): string {
  return windmillPath.replace(/\{[^}]*\}/g, "{}");
}

/** windmill-cli's commands in the issue's scope, by the bundle section that declares each. */
const CLI_COMMANDS: Record<string, RegExp> = {
  workspace: /^src\/commands\/workspace\//,
  script: /^src\/commands\/script\//,
  flow: /^src\/commands\/flow\//,
  variable: /^src\/commands\/variable\//,
  resource: /^src\/commands\/resource\//,
  "resource-type": /^src\/commands\/resource-type\//,
  schedule: /^src\/commands\/schedule\//,
  folder: /^src\/commands\/folder\//,
  group: /^src\/commands\/group\//,
  user: /^src\/commands\/user\//,
  token: /^src\/commands\/token\//,
  job: /^src\/commands\/jobs?\//,
  sync: /^src\/commands\/sync\//,
  "generate-metadata": /^src\/commands\/generate-metadata\//,
  queues: /^src\/commands\/queues\//,
  workers: /^src\/commands\/workers\//,
};

/** The top-level names each command's section of the CLI bundle declares (its commands' roots). */
function cliCommandRoots(source: string): Map<string, Set<string>> {
  const roots = new Map<string, Set<string>>();
  let section = "";
  for (const line of source.split("\n")) {
    const header = /^\/\/ (src\/\S+\.ts)$/.exec(line);
    if (header) {
      section = header[1]!;
      continue;
    }
    const command = Object.entries(CLI_COMMANDS).find(([, re]) => re.test(section))?.[0];
    if (!command) continue;
    const declared = /^(?:async function\*? |function\*? |var |let |const |class | {2})(\w+)\b/.exec(line);
    if (declared && /^(?!\s)|^ {2}\w+ = /.test(line)) {
      const set = roots.get(command) ?? new Set<string>();
      set.add(declared[1]!);
      roots.set(command, set);
    }
  }
  return roots;
}

/** The CLI bundle's generated service functions: `name = (data) => request(OpenAPI, {...})`. */
function cliServices(source: string): Map<string, { method: string; path: string }> {
  const services = new Map<string, { method: string; path: string }>();
  const re =
    /(?:^var |^\}, )(\w+) = \((?:data(?: = \{\})?)?\) => \{\n {2}return request\(OpenAPI, \{\n {4}method: "(\w+)",\n {4}url: "([^"]+)"/gm;
  for (const m of source.matchAll(re)) services.set(m[1]!, { method: m[2]!, path: m[3]! });
  return services;
}

/** Why an endpoint is out of the issue's scope (apps, triggers, datatables), or null. */
export function outOfScopeReason(op: { path: string; operationId: string; service?: string }): string | null {
  const p = op.path;
  if (
    /^\/w\/\{workspace\}\/(apps|apps_u|raw_apps)\//.test(p) ||
    /(^|\/)apps?\b/.test(op.service ?? "") ||
    /^(App|RawApp)Service$/.test(op.service ?? "") ||
    /App(s|Version|ByPath|Lite)?\b|RawApp/.test(op.operationId)
  )
    return "apps";
  if (
    /_triggers?\//.test(p) ||
    /\/(http|kafka|sqs|nats|mqtt|amqp|gcp|azure|websocket|postgres|email|native)_?triggers?\b/.test(p) ||
    /\/trigger(s)?\//.test(p) ||
    /Trigger/.test(op.operationId) ||
    /KafkaOffsets|Postgres(Publication|ReplicationSlot|Version)|IsValidPostgresConfiguration|TemplateScript/.test(
      op.operationId,
    )
  )
    return "triggers";
  // The shared UI folder holds the components raw apps share.
  if (/\/shared_ui\b/.test(p)) return "apps";
  if (
    /datatable|data_table|ducklake|pg_database/i.test(p) ||
    /Datatable|DataTable|Ducklake|PgDatabase/.test(op.operationId)
  )
    return "datatables";
  return null;
}

/** The endpoints windmill-cli's in-scope commands reach. */
function cliEndpoints(ops: Map<string, ServiceOperation & { service: string }>): Map<string, ClientEndpoint> {
  const source = fs.readFileSync(cliMain, "utf8");
  const graph = topLevelGraph(cliMain, source);
  const services = cliServices(source);
  const byOperation = new Map([...ops.values()].map((op) => [op.operationId, op]));
  const endpoints = new Map<string, ClientEndpoint>();
  const note = (method: string, windmillPath: string, operationId: string, caller: string) => {
    const op = byOperation.get(operationId);
    const key = `${method} ${windmillPath}`;
    const endpoint = endpoints.get(key) ?? {
      method,
      path: windmillPath,
      operationId,
      callers: [],
      outOfScope: outOfScopeReason({ path: windmillPath, operationId, service: op?.service }),
    };
    if (!endpoint.callers.includes(caller)) endpoint.callers.push(caller);
    endpoints.set(key, endpoint);
  };
  for (const [command, declared] of cliCommandRoots(source)) {
    // The commands themselves (`new Command()…action(fn)`): helpers of a section that no command
    // reaches (say `wmill instance`'s, declared beside `wmill user`'s) are not the command's calls.
    const roots = [...declared].filter((name) => graph.text.get(name)?.includes("new Command("));
    for (const name of reachable(graph, roots)) {
      const service = services.get(name);
      if (service) note(service.method, service.path, name, `wmill ${command}`);
      for (const built of handBuiltPaths(graph.text.get(name) ?? "")) {
        const match = [...services.entries()].find(([, s]) => skeleton(s.path) === built);
        const known =
          match ??
          [...byOperation.values()]
            .map((o) => [o.operationId, o] as const)
            .find(([, o]) => skeleton(o.path) === built);
        if (known) note(known[1].method, known[1].path, known[0], `wmill ${command}`);
      }
    }
  }
  return endpoints;
}

/** The endpoints windmill-client's exported functions reach. */
function clientEndpoints(
  ops: Map<string, ServiceOperation & { service: string }>,
): Map<string, ClientEndpoint> {
  const endpoints = new Map<string, ClientEndpoint>();
  const files = ["client.mjs", "sqlUtils.mjs", "s3Types.mjs", "wacError.mjs"];
  const graph: Graph = { refs: new Map(), text: new Map(), members: new Map() };
  for (const file of files) {
    const part = topLevelGraph(file, fs.readFileSync(path.join(clientDir, file), "utf8"));
    for (const [k, v] of part.refs) graph.refs.set(k, v);
    for (const [k, v] of part.text) graph.text.set(k, v);
    for (const [k, v] of part.members) graph.members.set(k, v);
  }
  // The package's exported functions (index.mjs re-exports them beside the services).
  const index = fs.readFileSync(path.join(clientDir, "index.mjs"), "utf8");
  // Named exports, and the members of the default export (`const wmill = { getResult, … }`).
  const exported = new Set(
    [...index.matchAll(/export \{([^}]*)\}|const wmill = \{([^}]*)\}/g)]
      .flatMap((m) => (m[1] ?? m[2]!).split(","))
      .map((s) => s.trim().split(/\s+as\s+/)[0]!)
      .filter((name) => name && !name.endsWith("Service") && graph.refs.has(name)),
  );
  for (const fn of [...exported].sort()) {
    for (const name of reachable(graph, [fn])) {
      for (const member of graph.members.get(name) ?? []) {
        const op = ops.get(member);
        if (!op) continue;
        const key = `${op.method} ${op.path}`;
        const endpoint = endpoints.get(key) ?? {
          method: op.method,
          path: op.path,
          operationId: op.operationId,
          callers: [],
          outOfScope: outOfScopeReason(op),
        };
        if (!endpoint.callers.includes(`windmill-client ${fn}`))
          endpoint.callers.push(`windmill-client ${fn}`);
        endpoints.set(key, endpoint);
      }
      for (const built of handBuiltPaths(graph.text.get(name) ?? "")) {
        const candidates = [...ops.values()].filter((o) => skeleton(o.path) === built);
        const code = graph.text.get(name) ?? "";
        const op = candidates.find((o) => code.includes(`method: "${o.method}"`)) ?? candidates[0];
        if (!op) continue;
        const key = `${op.method} ${op.path}`;
        const endpoint = endpoints.get(key) ?? {
          method: op.method,
          path: op.path,
          operationId: op.operationId,
          callers: [],
          outOfScope: outOfScopeReason(op),
        };
        if (!endpoint.callers.includes(`windmill-client ${fn}`))
          endpoint.callers.push(`windmill-client ${fn}`);
        endpoints.set(key, endpoint);
      }
    }
  }
  return endpoints;
}

/** The union, sorted by path then method. */
export function windmillClientEndpoints(): ClientEndpoint[] {
  const ops = clientServiceOperations();
  const all = new Map<string, ClientEndpoint>();
  for (const source of [clientEndpoints(ops), cliEndpoints(ops)]) {
    for (const [key, endpoint] of source) {
      const seen = all.get(key);
      if (!seen) {
        all.set(key, { ...endpoint, callers: [...endpoint.callers] });
        continue;
      }
      for (const c of endpoint.callers) if (!seen.callers.includes(c)) seen.callers.push(c);
    }
  }
  // An endpoint only out-of-scope functions call is out of scope with them.
  for (const endpoint of all.values()) {
    if (endpoint.outOfScope) continue;
    const reasons = endpoint.callers.map((caller) => OUT_OF_SCOPE_CALLERS[caller] ?? null);
    if (reasons.every((reason) => reason !== null)) endpoint.outOfScope = reasons[0]!;
  }
  return [...all.values()].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}

/** windmill-client functions of the out-of-scope domains (its data table and ducklake helpers). */
const OUT_OF_SCOPE_CALLERS: Record<string, string> = {
  "windmill-client datatable": "datatables",
  "windmill-client ducklake": "datatables",
  "windmill-client appendPartition": "datatables",
  "windmill-client upsertPartition": "datatables",
  "windmill-client commitKafkaOffsets": "triggers",
};
