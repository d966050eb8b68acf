import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hideSecretValues, restoreChanges } from "./restore-diff.ts";

describe("restore diff lines", () => {
  it("shows a changed file's hunks with context, an added file's content, a deleted file marked", () => {
    const before = new Map([
      ["a.sh", "1\n2\n3\n4\n5\n6\n7\n8\n9\n"],
      ["gone.sh", "echo gone\n"],
    ]);
    const after = new Map([
      ["a.sh", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n"],
      ["new.sh", "echo new\n"],
    ]);
    const changes = restoreChanges(
      { added: ["new.sh"], changed: ["a.sh"], deleted: ["gone.sh"] },
      before,
      after,
    );
    assert.deepEqual(changes.files, [
      {
        file: "a.sh",
        status: "changed",
        lines: ["@@ -2,7 +2,7 @@", " 2", " 3", " 4", "-5", "+five", " 6", " 7", " 8"],
        truncated: false,
      },
      { file: "new.sh", status: "added", lines: ["+echo new"], truncated: false },
      { file: "gone.sh", status: "deleted", lines: [], truncated: false },
    ]);
    assert.equal(changes.truncated, false);
  });

  it("caps the lines per file and in total, saying so", () => {
    const big = Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\n");
    const after = new Map([
      ["one.sh", big],
      ["two.sh", big],
      ["three.sh", big],
    ]);
    const changes = restoreChanges(
      { added: ["one.sh", "two.sh", "three.sh"], changed: [], deleted: [] },
      new Map(),
      after,
      {
        linesPerFile: 30,
        totalLines: 40,
        context: 3,
      },
    );
    assert.deepEqual(
      changes.files.map((f) => [f.lines.length, f.truncated]),
      [
        [30, true],
        [10, true],
        [0, true],
      ],
    );
    assert.equal(changes.truncated, true);
  });

  it("never shows a plain secret value, keeps ciphertext", () => {
    const plain = "description: ''\nis_secret: true\nvalue: hunter2-plain\n";
    const block = "is_secret: true\nvalue: |-\n  line one hunter2\n  line two\ndescription: x\n";
    const encrypted = "description: ''\nis_secret: true\nvalue: enc:v2:abc\n";
    const notSecret = "is_secret: false\nvalue: shown\n";
    assert.doesNotMatch(hideSecretValues("u/a/s.variable.yaml", plain), /hunter2/);
    const hidden = hideSecretValues("u/a/s.variable.yaml", block);
    assert.doesNotMatch(hidden, /hunter2|line two/);
    assert.match(hidden, /^description: x$/m);
    assert.equal(hideSecretValues("u/a/s.variable.yaml", encrypted), encrypted);
    assert.equal(hideSecretValues("u/a/s.variable.yaml", notSecret), notSecret);
    const changes = restoreChanges(
      { added: ["u/a/s.variable.yaml"], changed: [], deleted: [] },
      new Map(),
      new Map([["u/a/s.variable.yaml", plain]]),
    );
    assert.doesNotMatch(JSON.stringify(changes), /hunter2/);
  });
});
