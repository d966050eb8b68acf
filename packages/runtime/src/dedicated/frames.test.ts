import assert from "node:assert/strict";
import { it } from "node:test";
import { FrameSplitter } from "./frames.ts";

function split(chunks: string[]): { text: string; messages: string[] } {
  let text = "";
  const messages: string[] = [];
  const splitter = new FrameSplitter(
    "\x1eNONCE",
    (t) => (text += t),
    (m) => messages.push(m),
  );
  for (const chunk of chunks) splitter.push(chunk);
  splitter.flush();
  return { text, messages };
}

it("separates output from messages, wherever the chunks are cut", () => {
  const stream = 'hello\npartial line\x1eNONCE{"ok":true}\nafter\x1eNONCE\n';
  for (let cut = 0; cut <= stream.length; cut++) {
    for (let cut2 = cut; cut2 <= stream.length; cut2 += 3) {
      const { text, messages } = split([stream.slice(0, cut), stream.slice(cut, cut2), stream.slice(cut2)]);
      assert.equal(text, "hello\npartial lineafter", `cut at ${cut}/${cut2}`);
      assert.deepEqual(messages, ['{"ok":true}', ""]);
    }
  }
});

it("keeps output that only looks like the start of a mark", () => {
  assert.deepEqual(split(["a\x1eNON", "E b\x1e"]), { text: "a\x1eNONE b\x1e", messages: [] });
  assert.deepEqual(split(["\x1eOTHER{}\n"]), { text: "\x1eOTHER{}\n", messages: [] });
});
