// The git transport against a real remote: a bare repository served by `git http-backend` over
// smart HTTP with Basic auth (startTestGitRemote). No database needed.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { startTestGitRemote, type TestGitRemote } from "../testing/git-remote.ts";
import {
  commitFiles,
  ensureClone,
  GitAuthError,
  GitConflictError,
  GitRemoteUnavailableError,
  pullFiles,
  pushWithRebase,
  type GitRemoteOptions,
} from "./index.ts";

const PASSWORD = "s3cret-token-7f1d";
const ALICE = { name: "Alice Admin", email: "alice@example.test" };
const BOB = { name: "Bob Builder", email: "bob@example.test" };

let tmp: string;
before(async () => {
  tmp = await fs.promises.mkdtemp(path.join(os.tmpdir(), "millrace-git-test-"));
});
after(async () => {
  await fs.promises.rm(tmp, { recursive: true, force: true });
});

let counter = 0;
async function setup(): Promise<{ remote: TestGitRemote; opts: GitRemoteOptions }> {
  const remote = await startTestGitRemote({ username: "sync", password: PASSWORD });
  const dir = path.join(tmp, `ws-${++counter}`);
  return {
    remote,
    opts: { dir, url: remote.url, branch: "main", auth: { username: "sync", password: PASSWORD } },
  };
}

async function sync(
  opts: GitRemoteOptions,
  files: Record<string, string>,
  message: string,
  author = ALICE,
  deleted?: string[] | "replace-all",
): Promise<string | null> {
  await ensureClone(opts);
  const oid = await commitFiles({
    dir: opts.dir,
    files: new Map(Object.entries(files)),
    deleted,
    author,
    message,
  });
  await pushWithRebase(opts);
  return oid;
}

describe("git transport", () => {
  test("a commit arrives on an empty remote with its author, message and files; round trip timed", async () => {
    const { remote, opts } = await setup();
    try {
      const cloned = await ensureClone(opts);
      assert.deepEqual(cloned, { head: null, remoteHead: null });
      const oid = await commitFiles({
        dir: opts.dir,
        files: new Map([
          ["f/ops/hello.py", "def main():\n    return 1\n"],
          ["f/ops/hello.script.yaml", "summary: hello\n"],
          ["wmill.yaml", "defaultTs: bun\n"],
        ]),
        author: ALICE,
        message: "Deploy script f/ops/hello",
      });
      assert.ok(oid);
      const pushed = await pushWithRebase(opts);
      assert.equal(pushed.head, oid);
      assert.equal(pushed.rebased, false);

      const commits = await remote.commits();
      assert.equal(commits.length, 1);
      assert.equal(commits[0]?.oid, oid);
      assert.equal(commits[0]?.authorName, ALICE.name);
      assert.equal(commits[0]?.authorEmail, ALICE.email);
      assert.equal(commits[0]?.message, "Deploy script f/ops/hello");
      assert.deepEqual(commits[0]?.files, ["f/ops/hello.py", "f/ops/hello.script.yaml", "wmill.yaml"]);
      assert.equal(await remote.readFile("f/ops/hello.py"), "def main():\n    return 1\n");

      // Round trip of a sync on a warm cache: fetch + commit + push.
      const rounds = 5;
      const times: number[] = [];
      for (let i = 0; i < rounds; i++) {
        const started = performance.now();
        await ensureClone(opts);
        await commitFiles({
          dir: opts.dir,
          files: new Map([["f/ops/hello.script.yaml", `summary: hello ${i}\n`]]),
          author: ALICE,
          message: `Update f/ops/hello (${i})`,
        });
        await pushWithRebase(opts);
        times.push(performance.now() - started);
      }
      const commitOnly: number[] = [];
      for (let i = 0; i < rounds; i++) {
        const started = performance.now();
        await commitFiles({
          dir: opts.dir,
          files: new Map([["f/ops/hello.script.yaml", `summary: again ${i}\n`]]),
          author: ALICE,
          message: `Again ${i}`,
        });
        await pushWithRebase(opts);
        commitOnly.push(performance.now() - started);
      }
      const fmt = (xs: number[]): string =>
        `median ${[...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]?.toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;
      console.log(`git round trip (ensureClone+commit+push) over ${rounds} runs: ${fmt(times)}`);
      console.log(`git round trip (commit+push) over ${rounds} runs: ${fmt(commitOnly)}`);
      assert.equal((await remote.commits()).length, 1 + 2 * rounds);
      assert.equal(await remote.readFile("f/ops/hello.script.yaml"), `summary: again ${rounds - 1}\n`);
    } finally {
      await remote.close();
    }
  });

  test("a delete removes the file in its own commit; nothing to commit returns null", async () => {
    const { remote, opts } = await setup();
    try {
      await sync(opts, { "f/a/one.sh": "echo 1\n", "f/a/two.sh": "echo 2\n" }, "Deploy f/a/one and f/a/two");
      const again = await sync(opts, { "f/a/one.sh": "echo 1\n", "f/a/two.sh": "echo 2\n" }, "Nothing");
      assert.equal(again, null);
      assert.equal(await commitFiles({ dir: opts.dir, files: new Map(), author: ALICE, message: "x" }), null);

      const del = await sync(opts, {}, "Delete script f/a/two", BOB, ["f/a/two.sh"]);
      assert.ok(del);
      const commits = await remote.commits();
      assert.equal(commits.length, 2);
      assert.equal(commits[0]?.message, "Delete script f/a/two");
      assert.equal(commits[0]?.authorName, BOB.name);
      assert.deepEqual(commits[0]?.changes, [{ status: "D", path: "f/a/two.sh" }]);
      assert.deepEqual(await remote.listFiles(), ["f/a/one.sh"]);

      // replace-all: the tree becomes exactly the given files.
      const replaced = await sync(opts, { "f/b/new.ts": "export {}\n" }, "Replace all", ALICE, "replace-all");
      assert.ok(replaced);
      assert.deepEqual(await remote.listFiles(), ["f/b/new.ts"]);
      assert.deepEqual(
        (await remote.commits())[0]?.changes.sort((a, b) => a.path.localeCompare(b.path)),
        [
          { status: "D", path: "f/a/one.sh" },
          { status: "A", path: "f/b/new.ts" },
        ],
      );
      assert.equal(fs.existsSync(path.join(opts.dir, "f/a")), false);
      assert.equal(await sync(opts, { "f/b/new.ts": "export {}\n" }, "Same", ALICE, "replace-all"), null);
    } finally {
      await remote.close();
    }
  });

  test("wrong credentials: GitAuthError without the password in its message", async () => {
    const { remote, opts } = await setup();
    try {
      const wrong = { ...opts, auth: { username: "sync", password: "wrong-password-123" } };
      await assert.rejects(ensureClone(wrong), (err: unknown) => {
        assert.ok(err instanceof GitAuthError, String(err));
        assert.equal(err.status, 401);
        assert.doesNotMatch(err.message, /wrong-password-123|s3cret/);
        assert.match(err.message, /refused the credentials/);
        return true;
      });
      // A correct clone, then a push with wrong credentials.
      await ensureClone(opts);
      await commitFiles({ dir: opts.dir, files: new Map([["a.txt", "a\n"]]), author: ALICE, message: "a" });
      await assert.rejects(pushWithRebase(wrong), GitAuthError);
      // Credentials inside the URL are never echoed back either.
      const inUrl = {
        ...opts,
        url: opts.url.replace("http://", "http://sync:wrong-password-123@"),
        auth: undefined,
      };
      await assert.rejects(pushWithRebase(inUrl), (err: unknown) => {
        assert.ok(err instanceof GitAuthError);
        assert.doesNotMatch(err.message, /wrong-password-123/);
        assert.doesNotMatch(err.url, /wrong-password-123/);
        return true;
      });
      assert.deepEqual(await remote.commits(), []);
      await pushWithRebase(opts);
      assert.equal((await remote.commits()).length, 1);
    } finally {
      await remote.close();
    }
  });

  test("remote down: GitRemoteUnavailableError; after start() the same push succeeds", async () => {
    const { remote, opts } = await setup();
    try {
      await sync(opts, { "a.txt": "a\n" }, "first");
      await commitFiles({
        dir: opts.dir,
        files: new Map([["b.txt", "b\n"]]),
        author: BOB,
        message: "second",
      });
      await remote.stop();
      await assert.rejects(pushWithRebase(opts), (err: unknown) => {
        assert.ok(err instanceof GitRemoteUnavailableError, String(err));
        assert.match(err.message, /unreachable \(ECONNREFUSED\)/);
        assert.doesNotMatch(err.message, new RegExp(PASSWORD));
        return true;
      });
      await assert.rejects(ensureClone(opts), GitRemoteUnavailableError);
      await remote.start();
      const pushed = await pushWithRebase(opts);
      assert.equal(pushed.rebased, false);
      const commits = await remote.commits();
      assert.deepEqual(
        commits.map((c) => [c.message, c.authorName]),
        [
          ["second", BOB.name],
          ["first", ALICE.name],
        ],
      );
    } finally {
      await remote.close();
    }
  });

  test("someone else pushed another file: our commits are rebased on top, both changes kept in order", async () => {
    const { remote, opts } = await setup();
    try {
      await sync(opts, { "f/a/one.sh": "echo 1\n", "f/a/shared.yaml": "x: 1\n" }, "initial");
      const theirs = await remote.commitAsOther({ files: { "README.md": "# ops\n" }, message: "Add README" });
      await commitFiles({
        dir: opts.dir,
        files: new Map([["f/a/one.sh", "echo one\n"]]),
        author: ALICE,
        message: "Update f/a/one",
      });
      await commitFiles({
        dir: opts.dir,
        files: new Map(),
        deleted: ["f/a/shared.yaml"],
        author: BOB,
        message: "Delete shared",
      });
      const pushed = await pushWithRebase(opts);
      assert.equal(pushed.rebased, true);
      assert.equal(pushed.attempts, 2);

      const commits = await remote.commits();
      assert.deepEqual(
        commits.map((c) => [c.message, c.authorName, c.authorEmail, c.files.join(",")]),
        [
          ["Delete shared", BOB.name, BOB.email, "f/a/shared.yaml"],
          ["Update f/a/one", ALICE.name, ALICE.email, "f/a/one.sh"],
          ["Add README", "Someone Else", "someone@example.test", "README.md"],
          ["initial", ALICE.name, ALICE.email, "f/a/one.sh,f/a/shared.yaml"],
        ],
      );
      assert.equal(commits[2]?.oid, theirs);
      assert.deepEqual(await remote.listFiles(), ["README.md", "f/a/one.sh"]);
      assert.equal(await remote.readFile("f/a/one.sh"), "echo one\n");
      // The working copy follows the rebased branch.
      assert.equal(fs.readFileSync(path.join(opts.dir, "README.md"), "utf8"), "# ops\n");
      assert.equal(fs.existsSync(path.join(opts.dir, "f/a/shared.yaml")), false);

      // pullFiles reads the remote head (restore), here from a fresh cache folder.
      const pulled = await pullFiles({ ...opts, dir: path.join(tmp, `pull-${counter}`) });
      assert.deepEqual(
        [...pulled.entries()],
        [
          ["README.md", "# ops\n"],
          ["f/a/one.sh", "echo one\n"],
        ],
      );
    } finally {
      await remote.close();
    }
  });

  test("ensureClone fast-forwards a clean cache to the remote head, deleted files included", async () => {
    const { remote, opts } = await setup();
    try {
      await sync(opts, { "f/a/one.sh": "1\n", "f/a/two.sh": "2\n", "x/y.txt": "y\n" }, "initial");
      await remote.commitAsOther({
        files: { "f/a/two.sh": null, "x/y.txt": "changed\n", "z.txt": "z\n" },
        message: "other",
      });
      const cloned = await ensureClone(opts);
      assert.equal(cloned.head, await remote.head());
      assert.equal(fs.existsSync(path.join(opts.dir, "f/a/two.sh")), false);
      assert.equal(fs.readFileSync(path.join(opts.dir, "x/y.txt"), "utf8"), "changed\n");
      // A later commit does not bring the file they deleted back.
      await commitFiles({
        dir: opts.dir,
        files: new Map([["f/a/one.sh", "1b\n"]]),
        author: ALICE,
        message: "m2",
      });
      const pushed = await pushWithRebase(opts);
      assert.equal(pushed.rebased, false);
      assert.deepEqual((await remote.commits())[0]?.files, ["f/a/one.sh"]);
      assert.deepEqual(await remote.listFiles(), ["f/a/one.sh", "x/y.txt", "z.txt"]);
    } finally {
      await remote.close();
    }
  });

  test("empty remote that someone else initialised meanwhile: our first commit is replayed on theirs", async () => {
    const { remote, opts } = await setup();
    try {
      assert.equal((await ensureClone(opts)).remoteHead, null);
      await commitFiles({
        dir: opts.dir,
        files: new Map([["wmill.yaml", "a: 1\n"]]),
        author: ALICE,
        message: "ours",
      });
      await remote.commitAsOther({ files: { "README.md": "hi\n" }, message: "theirs" });
      const pushed = await pushWithRebase(opts);
      assert.equal(pushed.rebased, true);
      assert.deepEqual(
        (await remote.commits()).map((c) => c.message),
        ["ours", "theirs"],
      );
      assert.deepEqual(await remote.listFiles(), ["README.md", "wmill.yaml"]);
    } finally {
      await remote.close();
    }
  });

  test("someone else changed the same file: GitConflictError naming it, their version kept", async () => {
    const { remote, opts } = await setup();
    try {
      await sync(opts, { "f/a/one.sh": "echo 1\n", "f/a/two.sh": "echo 2\n" }, "initial");
      await remote.commitAsOther({
        files: { "f/a/one.sh": "echo theirs\n", "other.txt": "o\n" },
        message: "Their change",
      });
      const theirHead = await remote.head();
      await commitFiles({
        dir: opts.dir,
        files: new Map([
          ["f/a/one.sh", "echo ours\n"],
          ["f/a/two.sh", "echo two\n"],
        ]),
        author: ALICE,
        message: "Our change",
      });
      const ourHead = await ensureClone(opts);
      await assert.rejects(pushWithRebase(opts), (err: unknown) => {
        assert.ok(err instanceof GitConflictError, String(err));
        assert.deepEqual(err.paths, ["f/a/one.sh"]);
        assert.match(err.message, /f\/a\/one\.sh/);
        return true;
      });
      assert.equal(await remote.head(), theirHead);
      assert.equal(await remote.readFile("f/a/one.sh"), "echo theirs\n");
      assert.equal(await remote.readFile("f/a/two.sh"), "echo 2\n");
      // Our commit is still there locally, untouched.
      const after = await ensureClone(opts);
      assert.equal(after.head, ourHead.head);
      assert.equal(fs.readFileSync(path.join(opts.dir, "f/a/one.sh"), "utf8"), "echo ours\n");
    } finally {
      await remote.close();
    }
  });
});
