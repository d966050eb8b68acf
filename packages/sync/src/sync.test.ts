import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import {
  DEFAULT_WMILL_YAML,
  emptySnapshot,
  filesToSnapshot,
  formatSyncErrors,
  normalizeSnapshot,
  snapshotToFiles,
  snapshotToTarballFiles,
  type JsonObject,
  type SyncFlow,
  type SyncScript,
  type WorkspaceSnapshot,
} from "./index.ts";

const SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {},
  required: [],
};

function script(
  path: string,
  language: SyncScript["language"],
  content: string,
  extra: Partial<SyncScript> = {},
) {
  return {
    path,
    language,
    content,
    summary: "",
    description: "",
    schema: SCHEMA,
    lock: null,
    tag: null,
    timeout: null,
    priority: null,
    concurrent_limit: null,
    concurrency_time_window_s: null,
    concurrency_key: null,
    retry: null,
    memory_limit_mb: null,
    ...extra,
  } satisfies SyncScript;
}

/** A workspace with every kind and all five languages. */
function fullSnapshot(): WorkspaceSnapshot {
  return {
    wmillYaml: DEFAULT_WMILL_YAML,
    scripts: [
      script(
        "u/alice/hello",
        "bun",
        "export async function main(name: string) {\n  return `hi ${name}`;\n}\n",
        {
          summary: "Greets",
          lock: '{\n  "dependencies": {}\n}\n//bun.lock\n',
          schema: {
            $schema: "https://json-schema.org/draft/2020-12/schema",
            type: "object",
            properties: { name: { type: "string", description: "", default: "world" } },
            required: ["name"],
          },
        },
      ),
      script("f/ops/backup", "python3", "def main(days: int = 7):\n    return days\n", {
        summary: "Nightly backup",
        description: "Dumps the database.\nKeeps seven days.",
        lock: "requests==2.32.3\n",
        tag: "ops",
        timeout: 300,
        priority: 5,
        concurrent_limit: 1,
        concurrency_time_window_s: 60,
        concurrency_key: "backup",
        retry: { constant: { attempts: 3, seconds: 10 } },
        memory_limit_mb: 512,
      }),
      script("f/ops/clean", "bash", 'echo "cleaning $1"\n'),
      script("f/ops/deno_job", "deno", "export function main() {\n  return 1;\n}\n", { lock: "" }),
      script(
        "f/ops/report",
        "postgresql",
        "-- $1 since\nSELECT count(*) FROM job WHERE created_at > $1::timestamptz;\n",
      ),
    ],
    folders: [
      {
        name: "ops",
        display_name: "Operations",
        summary: "Ops scripts",
        owners: ["u/alice"],
        extra_perms: { "u/alice": true, "g/devs": false },
      },
    ],
    groups: [{ name: "devs", summary: "Developers", members: ["bob", "alice"], admins: ["alice"] }],
    resources: [
      {
        path: "f/ops/db",
        resource_type: "postgresql",
        value: {
          host: "db",
          port: 5432,
          user: "app",
          password: "$var:f/ops/db_password",
          sslmode: "disable",
        },
        description: "Main database",
      },
      {
        path: "u/alice/cfg",
        resource_type: "c_settings",
        value: {
          level: 3,
          tags: ["a", "b"],
          ratio: 0.1,
          big: 1e21,
          neg: -7,
          none: null,
          on: false,
          when: "2026-01-01",
        },
        description: "",
      },
    ],
    resourceTypes: [
      {
        name: "c_settings",
        schema: {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          properties: { level: { type: "integer" }, tags: { type: "array", items: { type: "string" } } },
          required: ["level"],
        },
        description: "Custom settings",
      },
    ],
    variables: [
      {
        path: "f/ops/db_password",
        value: "enc:v1:AAECAwQFBgcICQoL:c2VjcmV0",
        is_secret: true,
        description: "",
      },
      {
        path: "u/alice/greeting",
        value: "hello: world # not a comment",
        is_secret: false,
        description: "Plain",
      },
      { path: "u/alice/number_like", value: "0123", is_secret: false, description: "" },
      {
        path: "u/alice/tricky",
        value: "word ".repeat(40) + "end",
        is_secret: false,
        description: "  leading spaces, trailing newline\n\tand a tab: é ✓ 😀\n",
      },
      { path: "u/alice/yes", value: "yes", is_secret: false, description: "null" },
      { path: "u/alice/empty", value: "", is_secret: false, description: "~" },
      {
        path: "u/alice/multiline",
        value: "line 1\n  line 2\n\nline 4",
        is_secret: false,
        description: "true",
      },
    ],
    schedules: [
      {
        path: "f/ops/nightly",
        schedule: "0 0 2 * * *",
        timezone: "Europe/Paris",
        script_path: "f/ops/backup",
        is_flow: false,
        args: { days: 7 },
        enabled: true,
        summary: "Every night",
      },
      {
        path: "f/ops/paused",
        schedule: "*/30 * * * * *",
        timezone: "UTC",
        script_path: "f/ops/clean",
        is_flow: false,
        args: {},
        enabled: false,
        summary: null,
      },
      {
        path: "f/ops/sync_hourly",
        schedule: "0 0 * * * *",
        timezone: "UTC",
        script_path: "f/ops/sync_customers",
        is_flow: true,
        args: { since: "2026-01-01T00:00:00Z" },
        enabled: true,
        summary: null,
      },
    ],
    flows: [sampleSyncFlow()],
  };
}

/** A realistic flow: loops, both branch kinds, every language, locks, a failure step. */
function sampleSyncFlow(): SyncFlow {
  const step = (id: string, language: string, content: string, extra: Record<string, unknown> = {}) => ({
    id,
    value: { type: "rawscript", content, language, input_transforms: {}, ...extra },
  });
  return {
    path: "f/ops/sync_customers",
    summary: "Sync customers",
    description: "Pulls customers, enriches each one, notifies on failure",
    schema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { since: { type: "string", format: "date-time" } },
      required: ["since"],
      order: ["since"],
    },
    value: {
      early_return: "b",
      modules: [
        {
          ...step("a", "bun", "export async function main(since: string) {\n  return [{ id: 1 }];\n}\n", {
            lock: '{\n  "dependencies": {}\n}\n//bun.lock\n',
            input_transforms: { since: { type: "javascript", expr: "flow_input.since" } },
          }),
          summary: "Fetch customers",
          retry: { constant: { attempts: 2, seconds: 5 } },
        },
        {
          id: "b",
          value: {
            type: "forloopflow",
            iterator: { type: "javascript", expr: "results.a" },
            skip_failures: true,
            parallel: true,
            parallelism: { type: "static", value: 4 },
            modules: [
              {
                id: "c",
                value: {
                  type: "script",
                  path: "f/ops/backup",
                  input_transforms: { days: { type: "javascript", expr: "flow_input.iter.index" } },
                },
              },
              {
                id: "d",
                value: {
                  type: "branchone",
                  branches: [
                    {
                      summary: "VIP",
                      expr: "results.c > 3",
                      modules: [
                        { ...step("e", "python3", "def main():\n    return 'vip'\n"), summary: "Notify" },
                      ],
                    },
                  ],
                  default: [
                    { ...step("f", "python3", "def main():\n    return 'std'\n"), summary: "Notify" },
                  ],
                },
              },
            ],
          },
        },
        {
          id: "g",
          value: {
            type: "branchall",
            parallel: false,
            branches: [
              { summary: "Log", skip_failure: true, modules: [step("h", "bash", 'echo "$1"\n')] },
              { modules: [step("i", "deno", "export function main() {\n  return 1;\n}\n", { lock: "" })] },
            ],
          },
        },
        {
          id: "j",
          value: {
            type: "whileloopflow",
            skip_failures: false,
            modules: [
              {
                ...step("k", "postgresql", "-- $1 n\nSELECT $1::int + 1 AS n\n"),
                summary: "Count: up/down *",
                stop_after_if: { expr: "result.n >= 3", skip_if_stopped: false },
              },
            ],
          },
        },
        { id: "m", value: { type: "identity" } },
      ],
      failure_module: {
        ...step("failure", "bun", "export function main(message: string) {\n  return message;\n}\n", {
          input_transforms: { message: { type: "javascript", expr: "error.message" } },
        }),
        summary: "",
      },
    },
  };
}

/** Reverses every list and the key order of every object (same data, other order). */
function shuffled<T>(value: T): T {
  if (Array.isArray(value)) return value.map(shuffled).reverse() as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, shuffled(v)]),
    ) as T;
  }
  return value;
}

function loadFixture(name: string): Map<string, string> {
  const url = new URL(`../fixtures/${name}.json`, import.meta.url);
  const parsed = JSON.parse(fs.readFileSync(url, "utf8")) as { files: Record<string, string> };
  return new Map(Object.entries(parsed.files));
}

describe("snapshotToFiles", () => {
  it("is deterministic: same snapshot, same bytes, whatever the order of items and keys", () => {
    const a = snapshotToFiles(fullSnapshot());
    const b = snapshotToFiles(fullSnapshot());
    assert.deepEqual([...a], [...b]);
    const s = fullSnapshot();
    const reordered: WorkspaceSnapshot = {
      ...s,
      scripts: shuffled(s.scripts),
      folders: shuffled(s.folders),
      groups: shuffled(s.groups),
      resources: shuffled(s.resources),
      resourceTypes: shuffled(s.resourceTypes),
      variables: shuffled(s.variables),
      schedules: shuffled(s.schedules),
      flows: s.flows.map((f) => ({ ...f })).reverse(),
    };
    // Lists inside values (schema.required, args, value arrays) are data, not sets: put them back.
    for (const [i, original] of s.scripts.entries()) {
      const copy = reordered.scripts.find((x) => x.path === original.path);
      assert.ok(copy, String(i));
      copy.schema = shuffled(original.schema);
      (copy.schema as { required: unknown }).required = original.schema.required ?? [];
    }
    for (const r of reordered.resources) r.value = s.resources.find((x) => x.path === r.path)?.value ?? null;
    for (const t of reordered.resourceTypes) {
      const original = s.resourceTypes.find((x) => x.name === t.name);
      (t.schema as { required: unknown }).required = original?.schema.required ?? [];
      ((t.schema.properties as { tags: { items: unknown } }).tags as { items: unknown }).items = {
        type: "string",
      };
    }
    const c = snapshotToFiles(reordered);
    assert.deepEqual([...c.keys()], [...a.keys()]);
    for (const [file, text] of a) assert.equal(c.get(file), text, file);
  });

  it("lays files out like wmill: code + .script.yaml (+ .script.lock), folder.meta.yaml, groups/, root resource types", () => {
    const files = snapshotToFiles(fullSnapshot());
    assert.deepEqual(
      [...files.keys()],
      [
        "c_settings.resource-type.yaml",
        "f/ops/backup.py",
        "f/ops/backup.script.lock",
        "f/ops/backup.script.yaml",
        "f/ops/clean.script.yaml",
        "f/ops/clean.sh",
        "f/ops/db.resource.yaml",
        "f/ops/db_password.variable.yaml",
        "f/ops/deno_job.deno.ts",
        "f/ops/deno_job.script.yaml",
        "f/ops/folder.meta.yaml",
        "f/ops/nightly.schedule.yaml",
        "f/ops/paused.schedule.yaml",
        "f/ops/report.pg.sql",
        "f/ops/report.script.yaml",
        "f/ops/sync_customers__flow/count_updown.pg.sql",
        "f/ops/sync_customers__flow/fetch_customers.lock",
        "f/ops/sync_customers__flow/fetch_customers.ts",
        "f/ops/sync_customers__flow/flow.yaml",
        "f/ops/sync_customers__flow/h.sh",
        "f/ops/sync_customers__flow/i.deno.ts",
        "f/ops/sync_customers__flow/inline_script_0.ts",
        "f/ops/sync_customers__flow/notify.py",
        "f/ops/sync_customers__flow/notify_1.py",
        "f/ops/sync_hourly.schedule.yaml",
        "groups/devs.group.yaml",
        "u/alice/cfg.resource.yaml",
        "u/alice/empty.variable.yaml",
        "u/alice/greeting.variable.yaml",
        "u/alice/hello.script.lock",
        "u/alice/hello.script.yaml",
        "u/alice/hello.ts",
        "u/alice/multiline.variable.yaml",
        "u/alice/number_like.variable.yaml",
        "u/alice/tricky.variable.yaml",
        "u/alice/yes.variable.yaml",
        "wmill.yaml",
      ],
    );
    for (const [file, text] of files) {
      if (file.endsWith(".yaml")) assert.ok(text.endsWith("\n"), `${file} ends with a newline`);
    }
  });

  it("writes deno as .ts and bun as .bun.ts when wmill.yaml says defaultTs: deno, and reads them back", () => {
    const s = fullSnapshot();
    s.wmillYaml = "defaultTs: deno\n";
    const files = snapshotToFiles(s);
    assert.ok(files.has("u/alice/hello.bun.ts"));
    assert.ok(files.has("f/ops/deno_job.ts"));
    const back = filesToSnapshot(files);
    assert.deepEqual(back.errors, []);
    assert.deepEqual(back.snapshot, normalizeSnapshot(s));
  });
});

describe("round trip", () => {
  it("filesToSnapshot(snapshotToFiles(s)) equals s for a snapshot with every kind and all five languages", () => {
    const s = fullSnapshot();
    const result = filesToSnapshot(snapshotToFiles(s));
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.skipped, []);
    assert.deepEqual(result.snapshot, normalizeSnapshot(s));
    assert.deepEqual(
      result.snapshot.scripts.map((x) => x.language),
      ["python3", "bash", "deno", "postgresql", "bun"],
    );
  });

  it("an empty workspace is just wmill.yaml", () => {
    const files = snapshotToFiles(emptySnapshot());
    assert.deepEqual([...files.keys()], ["wmill.yaml"]);
    assert.deepEqual(filesToSnapshot(files), { snapshot: emptySnapshot(), errors: [], skipped: [] });
  });
});

/**
 * Files as `wmill sync pull` writes them: the server's JSON turned into YAML with wmill's options
 * (`yamlOptions` in src/commands/sync/sync.ts: its key order, single quotes), the lock moved to
 * `<path>.script.lock` and referenced as `'!inline …'` (ZipFSElement). Written by hand from those
 * rules, not by our serializer.
 */
const PULLED: [string, string][] = [
  [
    "f/ops/backup.script.yaml",
    `summary: Nightly backup
description: |-
  Dumps the database.
  Keeps seven days.
lock: '!inline f/ops/backup.script.lock'
concurrency_key: backup
concurrency_time_window_s: 60
concurrent_limit: 1
kind: script
priority: 5
schema:
  $schema: https://json-schema.org/draft/2020-12/schema
  type: object
  properties:
    days:
      type: integer
      description: ''
      default: 7
  required: []
tag: ops
timeout: 300
`,
  ],
  ["f/ops/backup.script.lock", "requests==2.32.3\n"],
  ["f/ops/backup.py", "def main(days: int = 7):\n    return days\n"],
  [
    "f/ops/folder.meta.yaml",
    `summary: Ops scripts
display_name: Operations
extra_perms:
  g/devs: false
  u/alice: true
owners:
  - u/alice
`,
  ],
  [
    "f/ops/db.resource.yaml",
    `description: Main database
value:
  host: db
  password: $var:f/ops/db_password
  port: 5432
resource_type: postgresql
`,
  ],
  [
    "f/ops/db_password.variable.yaml",
    `description: ''
value: enc:v1:AAECAwQFBgcICQoL:c2VjcmV0
is_secret: true
`,
  ],
  [
    "f/ops/nightly.schedule.yaml",
    `summary: Every night
args:
  days: 7
enabled: true
is_flow: false
schedule: 0 0 2 * * *
script_path: f/ops/backup
timezone: Europe/Paris
`,
  ],
  [
    "groups/devs.group.yaml",
    `summary: Developers
admins:
  - u/alice
members:
  - u/bob
`,
  ],
  [
    "c_settings.resource-type.yaml",
    `description: Custom settings
schema:
  $schema: https://json-schema.org/draft/2020-12/schema
  type: object
  properties:
    level:
      type: integer
  required:
    - level
`,
  ],
  [
    "u/alice/greeting.variable.yaml",
    `description: ''
value: 'hello: world # not a comment'
is_secret: false
`,
  ],
  ["wmill.yaml", DEFAULT_WMILL_YAML],
];

describe("files in the form wmill writes them", () => {
  it("reproduces a repository written by wmill sync pull byte for byte", () => {
    const files = new Map(PULLED);
    const result = filesToSnapshot(files);
    assert.deepEqual(result.errors, []);
    const again = snapshotToFiles(result.snapshot);
    assert.deepEqual([...again.keys()].sort(), [...files.keys()].sort());
    for (const [file, text] of files) assert.equal(again.get(file), text, file);
    const backup = result.snapshot.scripts[0];
    assert.equal(backup?.language, "python3");
    assert.equal(backup?.lock, "requests==2.32.3\n");
    assert.equal(backup?.timeout, 300);
    assert.deepEqual(result.snapshot.groups, [
      { name: "devs", summary: "Developers", members: ["alice", "bob"], admins: ["alice"] },
    ]);
  });

  it("reads the lock written with the !inline tag unquoted too", () => {
    const files = new Map(PULLED);
    const meta = files.get("f/ops/backup.script.yaml") ?? "";
    files.set(
      "f/ops/backup.script.yaml",
      meta.replace("'!inline f/ops/backup.script.lock'", "!inline f/ops/backup.script.lock"),
    );
    const result = filesToSnapshot(files);
    assert.deepEqual(result.errors, []);
    assert.equal(result.snapshot.scripts[0]?.lock, "requests==2.32.3\n");
  });

  it("reads the files the real wmill CLI 1.819 writes (init, script new in five languages, folder/resource-type/variable new)", () => {
    const files = loadFixture("wmill-new");
    // `schedule new` and `resource new` write empty templates (script_path: "", resource_type: ""),
    // which are not deployable: they belong to the error test below.
    const schedule = files.get("f/demo/my_sched.schedule.yaml");
    const resource = files.get("f/demo/my_res.resource.yaml");
    files.delete("f/demo/my_sched.schedule.yaml");
    files.delete("f/demo/my_res.resource.yaml");
    const result = filesToSnapshot(files);
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.skipped, []);
    const s = result.snapshot;
    assert.deepEqual(
      s.scripts.map((x) => [x.path, x.language, x.lock]),
      [
        ["f/demo/s_bash", "bash", ""],
        ["f/demo/s_bun", "bun", ""],
        ["f/demo/s_deno", "deno", ""],
        ["f/demo/s_postgresql", "postgresql", ""],
        ["f/demo/s_python3", "python3", ""],
      ],
    );
    assert.equal(s.scripts[4]?.content, files.get("f/demo/s_python3.py"));
    assert.deepEqual(s.scripts[0]?.schema, SCHEMA);
    assert.deepEqual(s.folders, [
      { name: "demo", display_name: "demo", summary: "", owners: [], extra_perms: {} },
    ]);
    assert.deepEqual(s.resourceTypes, [{ name: "my_type", schema: {}, description: "" }]);
    assert.deepEqual(s.variables, [{ path: "f/demo/my_var", value: "", is_secret: false, description: "" }]);
    // `script new` writes with wmill's sync options, so its metadata comes back byte for byte; the
    // wmill.yaml of `wmill init` is kept verbatim.
    const again = snapshotToFiles(s);
    for (const [file, text] of files) {
      if (file.endsWith(".script.yaml") || /\.(sh|py|ts|sql)$/.test(file) || file === "wmill.yaml") {
        assert.equal(again.get(file), text, file);
      }
    }
    // wmill-lock.yaml, AGENTS.md, CLAUDE.md, tsconfig.json and .claude/ are not workspace files.
    for (const file of ["wmill-lock.yaml", "AGENTS.md", "CLAUDE.md", "tsconfig.json"]) {
      assert.ok(files.has(file) && !again.has(file), file);
    }
    assert.ok(schedule && resource);
  });
});

describe("filesToSnapshot errors", () => {
  it("names every bad file and field in one report", () => {
    const cli = loadFixture("wmill-new");
    const files = new Map<string, string>([
      ...PULLED,
      // the raw templates of `wmill schedule new` / `wmill resource new`
      ["f/demo/my_sched.schedule.yaml", cli.get("f/demo/my_sched.schedule.yaml") ?? ""],
      ["f/demo/my_res.resource.yaml", cli.get("f/demo/my_res.resource.yaml") ?? ""],
      ["f/ops/broken.variable.yaml", "value: [unclosed\n"],
      ["f/ops/list.variable.yaml", "- a\n- b\n"],
      ["f/ops/weird.thing.yaml", "a: 1\n"],
      ["f/bad path/x.script.yaml", "summary: ''\n"],
      ["f/bad path/x.sh", "echo\n"],
      ["x/top/y.resource.yaml", "value: {}\n"],
      ["u/alice/orphan.py", "def main():\n  pass\n"],
      ["u/alice/nocode.script.yaml", "summary: ''\n"],
      ["u/alice/go_script.go", "package inner\n"],
      ["u/alice/go_script.script.yaml", "summary: ''\n"],
      [
        "u/alice/typed.script.yaml",
        "summary: 3\ntimeout: soon\nschema: []\nlock: '!inline u/alice/missing.script.lock'\n",
      ],
      ["u/alice/typed.ts", "export function main() {}\n"],
      ["u/alice/stale.script.lock", "old\n"],
      ["u/alice/bad.variable.yaml", "value: 12\nis_secret: 'yes'\n"],
      ["groups/g1.group.yaml", "members: [bob]\n"],
      ["f/ops/sub/folder.meta.yaml", "summary: ''\n"],
    ]);
    const { errors } = filesToSnapshot(files);
    const seen = errors.map((e) => `${e.file}${e.field ? `#${e.field}` : ""}`);
    assert.deepEqual(seen, [
      "f/bad path/x.script.yaml#path",
      "f/demo/my_res.resource.yaml#resource_type",
      "f/demo/my_sched.schedule.yaml#script_path",
      "f/ops/broken.variable.yaml",
      "f/ops/list.variable.yaml",
      "f/ops/sub/folder.meta.yaml",
      "f/ops/weird.thing.yaml",
      "groups/g1.group.yaml#members",
      "u/alice/bad.variable.yaml#is_secret",
      "u/alice/bad.variable.yaml#value",
      "u/alice/go_script.go#language",
      "u/alice/nocode.script.yaml",
      "u/alice/orphan.py",
      "u/alice/stale.script.lock",
      "u/alice/typed.script.yaml#lock",
      "u/alice/typed.script.yaml#schema",
      "u/alice/typed.script.yaml#summary",
      "u/alice/typed.script.yaml#timeout",
    ]);
    const message = (file: string, field?: string) =>
      errors.find((e) => e.file === file && e.field === field)?.message ?? "";
    assert.match(message("f/ops/broken.variable.yaml"), /malformed YAML/);
    assert.match(message("f/ops/weird.thing.yaml"), /unknown kind of file/);
    assert.match(message("u/alice/orphan.py"), /code file without metadata/);
    assert.match(message("u/alice/nocode.script.yaml"), /without a code file/);
    assert.match(message("u/alice/go_script.go", "language"), /go is not supported/);
    assert.match(message("u/alice/typed.script.yaml", "timeout"), /must be an integer, got a string/);
    assert.match(message("f/bad path/x.script.yaml", "path"), /segment "bad path"/);
    assert.match(formatSyncErrors(errors), /^f\/bad path\/x\.script\.yaml \(path\): invalid path: /);
    assert.equal(formatSyncErrors(errors).split("\n").length, errors.length);
    // x/ is not a folder wmill reads: ignored, like wmill does.
    assert.ok(!seen.some((s) => s.startsWith("x/")));
  });

  it("ignores what wmill ignores and lists what Millrace does not read yet", () => {
    const files = new Map<string, string>([
      ...PULLED,
      [".gitignore", "node_modules\n"],
      ["README.md", "# repo\n"],
      ["wmill-lock.yaml", "version: v2\nlocks: {}\n"],
      [".claude/skills/x/SKILL.md", "x"],
      ["f/ops/node_modules/pkg/index.ts", "x"],
      ["f/ops/notes.md", "notes"],
      ["f/ops/app1__app/app.yaml", "summary: ''\n"],
      ["f/ops/hook.http_trigger.yaml", "route_path: x\n"],
      ["f/ops/old.variable.json", "{}"],
      ["users/alice.user.yaml", "email: a@b\n"],
    ]);
    const result = filesToSnapshot(files);
    assert.deepEqual(result.errors, []);
    assert.deepEqual(
      result.skipped.map((s) => s.file),
      [
        "f/ops/app1__app/app.yaml",
        "f/ops/hook.http_trigger.yaml",
        "f/ops/old.variable.json",
        "users/alice.user.yaml",
      ],
    );
    assert.match(result.skipped[0]?.reason ?? "", /apps are not supported/);
  });
});

const OPERATORS = {
  runs: true,
  schedules: true,
  resources: true,
  variables: true,
  assets: true,
  audit_logs: true,
  triggers: true,
  groups: true,
  folders: true,
  workers: true,
  manage_schedules: false,
  manage_triggers: false,
};

/** A workspace with settings: a color, an object storage with a secondary one, the operators'. */
function settingsSnapshot(): WorkspaceSnapshot {
  return {
    ...fullSnapshot(),
    settings: {
      name: "Acme ops",
      color: "#336699",
      large_file_storage: {
        type: "S3Storage",
        s3_resource_path: "$res:f/data/s3",
        public_resource: true,
        secondary_storage: { archive: { type: "S3Storage", s3_resource_path: "f/data/archive" } },
      },
      operator_settings: OPERATORS,
    },
  };
}

describe("settings.yaml", () => {
  it("is written at the root in wmill's grouped format, keys in wmill's order whatever the input's", () => {
    const files = snapshotToFiles(settingsSnapshot());
    assert.equal(
      files.get("settings.yaml"),
      [
        "name: Acme ops",
        "color: '#336699'",
        "large_file_storage:",
        "  type: S3Storage",
        "  public_resource: true",
        "  s3_resource_path: $res:f/data/s3",
        "  secondary_storage:",
        "    archive:",
        "      type: S3Storage",
        "      s3_resource_path: f/data/archive",
        "operator_settings:",
        "  assets: true",
        "  audit_logs: true",
        "  folders: true",
        "  groups: true",
        "  manage_schedules: false",
        "  manage_triggers: false",
        "  resources: true",
        "  runs: true",
        "  schedules: true",
        "  triggers: true",
        "  variables: true",
        "  workers: true",
        "",
      ].join("\n"),
    );
    const reordered = settingsSnapshot();
    const settings = reordered.settings!;
    reordered.settings = {
      operator_settings: Object.fromEntries(Object.entries(OPERATORS).reverse()),
      large_file_storage: Object.fromEntries(Object.entries(settings.large_file_storage!).reverse()),
      color: settings.color,
      name: settings.name,
    };
    assert.deepEqual(snapshotToFiles(reordered), files);
  });

  it("round-trips; without color or storage the keys are left out; no settings, no file", () => {
    for (const snapshot of [
      settingsSnapshot(),
      {
        ...fullSnapshot(),
        settings: { name: "w", color: null, large_file_storage: null, operator_settings: OPERATORS },
      },
    ]) {
      const files = snapshotToFiles(snapshot);
      const result = filesToSnapshot(files);
      assert.deepEqual(result.errors, []);
      assert.deepEqual(result.skipped, []);
      assert.deepEqual(result.snapshot, normalizeSnapshot(snapshot));
      assert.deepEqual(snapshotToFiles(result.snapshot), files);
    }
    const bare = snapshotToFiles({
      ...fullSnapshot(),
      settings: { name: "w", color: null, large_file_storage: null, operator_settings: null },
    });
    assert.equal(bare.get("settings.yaml"), "name: w\n");
    assert.equal(snapshotToFiles(fullSnapshot()).has("settings.yaml"), false);
    assert.equal(filesToSnapshot(snapshotToFiles(fullSnapshot())).snapshot.settings, undefined);
  });

  it("reads a file pulled from Windmill: unset Windmill-only settings ignored, set ones skipped, unknown keys and bad types are errors", () => {
    const windmill = [
      "name: Acme",
      "webhook: ''",
      "mute_critical_alerts: false",
      "error_handler: null",
      "auto_invite:",
      "  enabled: false",
      "  operator: false",
      "slack_name: acme-team",
      "color: '#112233'",
      "operator_settings:",
      "  runs: true",
      "",
    ].join("\n");
    const ok = filesToSnapshot(new Map([["settings.yaml", windmill]]));
    assert.deepEqual(ok.errors, []);
    assert.deepEqual(ok.skipped, [
      { file: "settings.yaml", reason: "slack_name: Millrace has no Slack integration; not applied" },
    ]);
    assert.deepEqual(ok.snapshot.settings, {
      name: "Acme",
      color: "#112233",
      large_file_storage: null,
      operator_settings: { runs: true },
    });
    const bad = filesToSnapshot(
      new Map([
        [
          "settings.yaml",
          "name: [a]\ncolour: '#112233'\ncolor: 3\nlarge_file_storage: [x]\noperator_settings:\n  runs: yes please\n",
        ],
      ]),
    );
    assert.deepEqual(formatSyncErrors(bad.errors).split("\n"), [
      "settings.yaml (color): color must be a string (#rrggbb)",
      "settings.yaml (colour): unknown setting colour (Millrace reads name, color, large_file_storage and operator_settings)",
      "settings.yaml (large_file_storage): large_file_storage must be a map (S3Storage)",
      "settings.yaml (name): name must be a string",
      "settings.yaml (operator_settings): operator_settings must be a map of true/false",
    ]);
    assert.deepEqual(
      formatSyncErrors(filesToSnapshot(new Map([["settings.yaml", "- a\n"]])).errors),
      "settings.yaml: must be a YAML map, got a list",
    );
    // Windmill's per-workspace and JSON settings files are not read.
    assert.deepEqual(
      filesToSnapshot(
        new Map([
          ["settings.json", "{}"],
          ["settings.prod.yaml", "name: x\n"],
        ]),
      ).skipped.map((s) => s.file),
      ["settings.json", "settings.prod.yaml"],
    );
  });
});

/** A plain ustar archive of text files (what `GET /workspaces/tarball?archive_type=tar` returns). */
function tarOf(files: Map<string, string>): Buffer {
  const blocks: Buffer[] = [];
  for (const [name, text] of files) {
    const body = Buffer.from(text, "utf8");
    const header = Buffer.alloc(512);
    const put = (value: string, offset: number, length: number) =>
      header.write(value, offset, length, "utf8");
    const octal = (n: number, length: number) => n.toString(8).padStart(length - 1, "0") + "\0";
    assert.ok(Buffer.byteLength(name) < 100, name);
    put(name, 0, 100);
    put(octal(0o644, 8), 100, 8);
    put(octal(0, 8), 108, 8);
    put(octal(0, 8), 116, 8);
    put(octal(body.length, 12), 124, 12);
    put(octal(0, 12), 136, 12);
    put("        ", 148, 8);
    put("0", 156, 1);
    put("ustar\0", 257, 6);
    put("00", 263, 2);
    let sum = 0;
    for (const byte of header) sum += byte;
    put(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8);
    blocks.push(header, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

function readTree(root: string, dir = root, out = new Map<string, string>()): Map<string, string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) readTree(root, full, out);
    else out.set(path.relative(root, full).split(path.sep).join("/"), fs.readFileSync(full, "utf8"));
  }
  return out;
}

/**
 * Runs the real wmill 1.819 (`node_modules/windmill-cli`) in `dir` against a stub of the few
 * Windmill endpoints `sync pull` and `sync push --dry-run` call, whose tarball holds `remote`.
 */
async function runWmill(dir: string, remote: Map<string, string>, args: string[]): Promise<string> {
  const tar = tarOf(remote);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const send = (status: number, body: string | Buffer, type = "application/json") => {
      res.writeHead(status, { "content-type": type });
      res.end(body);
    };
    if (url.pathname === "/api/users/whoami" || url.pathname === "/api/w/ws/users/whoami") {
      return send(200, JSON.stringify({ username: "alice", email: "alice@example.com", is_admin: true }));
    }
    if (url.pathname === "/api/version") return send(200, "v1.819.0", "text/plain");
    if (url.pathname === "/api/w/ws/workspaces/list_ws_specific") return send(200, "[]");
    if (url.pathname === "/api/w/ws/resources/file_resource_type_to_file_ext_map") return send(200, "{}");
    if (url.pathname === "/api/w/ws/workspaces/tarball") {
      if (url.searchParams.get("archive_type") === "zip")
        return send(400, "Invalid Archive Type", "text/plain");
      // What our wmill.yaml asks for.
      assert.equal(url.searchParams.get("include_schedules"), "true");
      assert.equal(url.searchParams.get("include_groups"), "true");
      assert.equal(url.searchParams.get("skip_secrets"), "false");
      return send(200, tar, "application/octet-stream");
    }
    return send(404, "not found", "text/plain");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const port = (server.address() as AddressInfo).port;
    const cli = fileURLToPath(new URL("../../../node_modules/windmill-cli/esm/main.js", import.meta.url));
    const child = spawn(
      process.execPath,
      [cli, ...args, "--base-url", `http://127.0.0.1:${port}/`, "--token", "t", "--workspace", "ws"],
      {
        cwd: dir,
        env: {
          PATH: process.env.PATH,
          HOME: dir,
          WMILL_CONFIG_DIR: path.join(dir, ".config"),
          NO_COLOR: "1",
        },
      },
    );
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    assert.equal(code, 0, output);
    return stripVTControlCharacters(output);
  } finally {
    server.close();
  }
}

function writeTree(dir: string, files: Map<string, string>): void {
  for (const [file, text] of files) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
}

/** The `+ kind path` / `~ kind path` / `- kind path` lines of a wmill change list. */
function changeLines(output: string): string[] {
  return output
    .split("\n")
    .filter((line) => /^[+~-] \S+ \S/.test(line))
    .sort();
}

describe("the real wmill CLI", () => {
  it("wmill sync pull of snapshotToTarballFiles writes exactly snapshotToFiles, byte for byte", async () => {
    const snapshot = fullSnapshot();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-pull-"));
    try {
      fs.writeFileSync(path.join(dir, "wmill.yaml"), snapshot.wmillYaml);
      const output = await runWmill(dir, snapshotToTarballFiles(snapshot), [
        "sync",
        "pull",
        "--yes",
        "--skip-branch-validation",
      ]);
      const pulled = readTree(dir);
      const expected = snapshotToFiles(snapshot);
      pulled.delete("wmill-lock.yaml"); // wmill's own metadata cache, not part of the workspace
      assert.deepEqual([...pulled.keys()].sort(), [...expected.keys()].sort(), output);
      for (const [file, text] of expected) assert.equal(pulled.get(file), text, file);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("wmill sync push --dry-run reads every file we write: all of them against an empty workspace, none against the same one", async () => {
    const snapshot = fullSnapshot();
    const files = snapshotToFiles(snapshot);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-push-"));
    try {
      writeTree(dir, files);
      const push = ["sync", "push", "--dry-run", "--yes", "--skip-branch-validation"];
      const toEmpty = changeLines(await runWmill(dir, new Map(), push));
      const expected = [...files.keys()].filter((f) => f !== "wmill.yaml");
      assert.deepEqual(
        toEmpty.map((line) => line.split(" ").pop()).sort(),
        expected.sort(),
        toEmpty.join("\n"),
      );
      assert.ok(
        toEmpty.every((line) => line.startsWith("+ ")),
        toEmpty.join("\n"),
      );
      assert.equal(toEmpty.length, expected.length);
      const toSame = await runWmill(dir, snapshotToTarballFiles(snapshot), push);
      assert.deepEqual(changeLines(toSame), [], toSame);
      assert.match(toSame, /remote \(ws\) <- local: 0 changes to apply/, toSame);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the real wmill CLI with includeSettings", () => {
  const withSettings = (): WorkspaceSnapshot => ({
    ...settingsSnapshot(),
    wmillYaml: DEFAULT_WMILL_YAML + "includeSettings: true\n",
  });

  it("wmill sync pull --include-settings of the tarball's settings.json writes exactly our settings.yaml", async () => {
    const snapshot = withSettings();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-settings-"));
    try {
      fs.writeFileSync(path.join(dir, "wmill.yaml"), snapshot.wmillYaml);
      const tarball = snapshotToTarballFiles(snapshot);
      assert.ok(tarball.has("settings.json"));
      const output = await runWmill(dir, tarball, ["sync", "pull", "--yes", "--skip-branch-validation"]);
      const pulled = readTree(dir);
      pulled.delete("wmill-lock.yaml");
      const expected = snapshotToFiles(snapshot);
      assert.deepEqual([...pulled.keys()].sort(), [...expected.keys()].sort(), output);
      for (const [file, text] of expected) assert.equal(pulled.get(file), text, file);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("wmill sync push --dry-run: settings.yaml is a change against an empty workspace, none against the same one; without includeSettings it is ignored", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-settings-push-"));
    try {
      const snapshot = withSettings();
      writeTree(dir, snapshotToFiles(snapshot));
      const push = ["sync", "push", "--dry-run", "--yes", "--skip-branch-validation"];
      const toEmpty = changeLines(await runWmill(dir, new Map(), push));
      assert.ok(toEmpty.includes("+ settings settings.yaml"), toEmpty.join("\n"));
      const toSame = await runWmill(dir, snapshotToTarballFiles(snapshot), push);
      assert.deepEqual(changeLines(toSame), [], toSame);
      fs.writeFileSync(path.join(dir, "wmill.yaml"), DEFAULT_WMILL_YAML);
      const ignored = changeLines(await runWmill(dir, new Map(), push));
      assert.ok(!ignored.some((line) => line.includes("settings.yaml")), ignored.join("\n"));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("flows", () => {
  const flowOnly = (wmillYaml: string, flow: SyncFlow = sampleSyncFlow()): WorkspaceSnapshot => ({
    ...emptySnapshot(),
    wmillYaml,
    flows: [flow],
  });

  it("writes <path>__flow/ with step files named from summaries when nonDottedPaths is true", () => {
    const files = snapshotToFiles(flowOnly(DEFAULT_WMILL_YAML));
    const yaml = files.get("f/ops/sync_customers__flow/flow.yaml") ?? "";
    assert.match(yaml, /content: '!inline fetch_customers\.ts'/);
    assert.match(yaml, /lock: '!inline fetch_customers\.lock'/);
    assert.match(yaml, /content: '!inline notify_1\.py'/);
    assert.match(yaml, /content: '!inline inline_script_0\.ts'/); // the failure step (empty summary)
    assert.match(yaml, /lock: ''/); // an empty lock stays in flow.yaml
    assert.equal(files.get("f/ops/sync_customers__flow/h.sh"), 'echo "$1"\n');
    assert.equal(
      files.get("f/ops/sync_customers__flow/fetch_customers.lock"),
      '{\n  "dependencies": {}\n}\n//bun.lock\n',
    );
  });

  it("writes <path>.flow/ with .inline_script. names by default (wmill's dotted layout)", () => {
    const files = snapshotToFiles(flowOnly("defaultTs: bun\n"));
    assert.deepEqual(
      [...files.keys()].filter((f) => f.startsWith("f/")),
      [
        "f/ops/sync_customers.flow/count_updown.inline_script.pg.sql",
        "f/ops/sync_customers.flow/fetch_customers.inline_script.lock",
        "f/ops/sync_customers.flow/fetch_customers.inline_script.ts",
        "f/ops/sync_customers.flow/flow.yaml",
        "f/ops/sync_customers.flow/h.inline_script.sh",
        "f/ops/sync_customers.flow/i.inline_script.deno.ts",
        "f/ops/sync_customers.flow/inline_script_0.inline_script.ts",
        "f/ops/sync_customers.flow/notify.inline_script.py",
        "f/ops/sync_customers.flow/notify_1.inline_script.py",
      ],
    );
    const back = filesToSnapshot(files);
    assert.deepEqual(back.errors, []);
    assert.deepEqual(back.snapshot, normalizeSnapshot(flowOnly("defaultTs: bun\n")));
  });

  it("round-trips the engine's sample flow (every step kind) in both layouts", async () => {
    const { sampleFlow } = await import("../../core/src/flows/sample-flow.ts");
    const sample = sampleFlow() as {
      summary: string;
      description: string;
      value: JsonObject;
      schema: JsonObject;
    };
    const flow: SyncFlow = { path: "u/alice/sample", ...sample };
    for (const yaml of [DEFAULT_WMILL_YAML, "defaultTs: deno\n"]) {
      const s = flowOnly(yaml, flow);
      const result = filesToSnapshot(snapshotToFiles(s));
      assert.deepEqual(result.errors, []);
      assert.deepEqual(result.skipped, []);
      assert.deepEqual(result.snapshot, normalizeSnapshot(s));
    }
  });

  it("reads a folder in the layout `wmill flow new` writes, whatever the wmill.yaml's nonDottedPaths, and a flow without schema", () => {
    // `wmill flow new f/demo/hello` (1.819) writes flow.yaml with the `yaml` package's defaults;
    // the steps and their files are what a developer then adds beside it.
    const flowYaml = [
      "summary: Hello",
      'description: ""',
      "value:",
      "  modules:",
      "    - id: a",
      "      value:",
      "        type: rawscript",
      "        content: '!inline a.inline_script.ts'",
      "        language: bun",
      "        input_transforms:",
      "          name:",
      "            type: javascript",
      "            expr: flow_input.name",
      "    - id: b",
      "      value:",
      "        type: rawscript",
      "        content: !inline b.inline_script.sh",
      "        lock: '!inline b.inline_script.lock'",
      "        language: bash",
      "        input_transforms: {}",
      "schema:",
      "  $schema: https://json-schema.org/draft/2020-12/schema",
      "  type: object",
      "  order: []",
      "  properties: {}",
      "  required: []",
      "",
    ].join("\n");
    for (const [wmillYaml, suffix] of [
      ["nonDottedPaths: true\n", ".flow"],
      ["defaultTs: bun\n", "__flow"],
    ] as const) {
      const files = new Map([
        ["wmill.yaml", wmillYaml],
        [`f/demo/hello${suffix}/flow.yaml`, flowYaml],
        [`f/demo/hello${suffix}/a.inline_script.ts`, "export function main(name: string) { return name }\n"],
        [`f/demo/hello${suffix}/b.inline_script.sh`, "echo hi\n"],
        [`f/demo/hello${suffix}/README.md`, "ignored"],
      ]);
      const result = filesToSnapshot(files);
      assert.deepEqual(result.errors, []);
      assert.equal(result.snapshot.flows.length, 1);
      const flow = result.snapshot.flows[0]!;
      assert.equal(flow.path, "f/demo/hello");
      assert.equal(flow.summary, "Hello");
      const modules = flow.value.modules as { value: { content: string; lock?: string } }[];
      assert.equal(modules[0]!.value.content, "export function main(name: string) { return name }\n");
      assert.equal(modules[1]!.value.content, "echo hi\n");
      assert.equal(modules[1]!.value.lock, ""); // a missing lock file reads as empty, as wmill does
    }
  });

  it("names the step and file of a missing inline file, a flow folder without flow.yaml, and two folders of one flow", () => {
    const files = new Map([
      [
        "f/demo/a__flow/flow.yaml",
        "value:\n  modules:\n    - id: x\n      value: {type: rawscript, language: bash, content: '!inline x.sh'}\n",
      ],
      ["f/demo/b__flow/x.sh", "echo\n"],
      ["f/demo/c__flow/flow.yaml", "value:\n  modules: []\n"],
      ["f/demo/c.flow/flow.yaml", "value:\n  modules: []\n"],
      ["f/demo/d__flow/flow.yaml", "summary: [1]\nvalue: 3\n"],
    ]);
    const result = filesToSnapshot(files);
    assert.deepEqual(formatSyncErrors(result.errors).split("\n"), [
      "f/demo/a__flow/flow.yaml (step x): step x: content refers to f/demo/a__flow/x.sh, which does not exist",
      "f/demo/b__flow: flow folder without flow.yaml",
      "f/demo/c__flow: two folders for the flow f/demo/c: f/demo/c.flow and f/demo/c__flow; keep one",
      "f/demo/d__flow/flow.yaml (summary): summary must be a string",
      "f/demo/d__flow/flow.yaml (value): value must be a map with the flow's modules",
    ]);
  });
});
