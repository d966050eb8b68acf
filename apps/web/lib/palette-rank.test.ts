import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { paletteScore, rankGroups } from "./palette-rank.ts";

const script = (path: string, summary = "") => [path, summary, "bash", "script"];

function ranked(search: string, entries: Record<string, string[]>): string[] {
  return Object.entries(entries)
    .map(([key, keywords]) => ({ key, score: paletteScore(key, search, keywords) }))
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score)
    .map((entry) => entry.key);
}

describe("paletteScore", () => {
  it("ranks the exact name, a prefix, a substring, another keyword, then letters in order", () => {
    const entries = {
      ts_obj: script("u/admin/ts_obj", "Builds a typed object for the pipeline"),
      post_it_pre: script("u/admin/post_it_pre"),
      my_pipe_run: script("u/admin/my_pipe_run"),
      pipeline: script("u/admin/pipeline"),
      pipe: script("u/admin/pipe"),
      unrelated: script("u/admin/hello", "says hello"),
    };
    assert.deepEqual(ranked("pipe", entries), ["pipe", "pipeline", "my_pipe_run", "ts_obj", "post_it_pre"]);
    assert.deepEqual(ranked("u/admin/pipel", entries)[0], "pipeline");
    assert.deepEqual(ranked("PIPE", entries)[0], "pipe");
  });

  it("needs every term to match and ranks by the weakest", () => {
    const entries = {
      script: script("u/admin/pal_alpha"),
      run: ["u/admin/pal_alpha", "success", "0190-abcd", "run"],
      failed: ["u/admin/pal_alpha", "failure", "0190-efgh", "run"],
    };
    assert.deepEqual(ranked("pal_alpha success", entries), ["run"]);
    assert.equal(paletteScore("x", "  ", ["anything"]), 1);
  });

  it("matches a page by its label", () => {
    assert.equal(paletteScore("page:/w/x/audit", "audit", ["Audit log", "page"]), 0.9);
    assert.equal(paletteScore("page:/w/x/audit", "Audit  log", ["Audit log", "page"]), 1);
  });
});

describe("rankGroups", () => {
  it("keeps matching entries best first and puts the group of the best match first", () => {
    const entry = (key: string, ...keywords: string[]) => ({ key, keywords });
    const groups = [
      { heading: "Scripts", entries: [entry("a", "u/admin/my_pipe_run"), entry("b", "u/admin/pipe")] },
      { heading: "Schedules", entries: [entry("c", "u/admin/nightly")] },
      { heading: "Pages", entries: [entry("d", "Pipelines", "page")] },
    ];
    assert.deepEqual(
      rankGroups(groups, "pipe").map((group) => [group.heading, group.entries.map((each) => each.key)]),
      [
        ["Scripts", ["b", "a"]],
        ["Pages", ["d"]],
      ],
    );
    assert.equal(rankGroups(groups, "").length, 3);
  });
});
