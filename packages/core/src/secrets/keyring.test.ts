import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newDataKey, seal } from "./cipher.ts";
import { ciphertextKeyId, dataKeyOf, isEncrypted, newWorkspaceKey, openWith, sealWith } from "./keyring.ts";

describe("workspace keys and enc:v2 values", () => {
  it("a key's text gives the same key back: Millrace's raw keys as they are, other texts stretched", () => {
    const made = newWorkspaceKey();
    assert.match(made.text, /^[A-Za-z0-9_-]{43}$/);
    const again = dataKeyOf(made.text);
    assert.deepEqual(again.key, made.key);
    assert.equal(again.id, made.id);
    const windmill = "a".repeat(32) + "B".repeat(32);
    assert.deepEqual(dataKeyOf(windmill).key, dataKeyOf(windmill).key, "deterministic");
    assert.equal(dataKeyOf(windmill).key.length, 32);
    assert.notEqual(dataKeyOf(windmill).id, made.id);
    // 43 characters that are not a canonical base64url of 32 bytes are a passphrase like any other.
    const nonCanonical = "A".repeat(42) + "B";
    assert.notDeepEqual(dataKeyOf(nonCanonical).key, Buffer.from(nonCanonical, "base64url"));
  });

  it("a value names its key, opens in any workspace holding it, and nowhere else", () => {
    const key = newWorkspaceKey();
    const sealed = sealWith(key, "hunter2 ✓");
    assert.match(sealed, /^enc:v2:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
    assert.ok(isEncrypted(sealed));
    assert.equal(ciphertextKeyId(sealed), key.id);
    assert.equal(openWith(key, "ws1", sealed), "hunter2 ✓");
    assert.equal(openWith(dataKeyOf(key.text), "another-ws", sealed), "hunter2 ✓");
    assert.equal(openWith(newWorkspaceKey(), "ws1", sealed), null, "another key does not open it");
    // The header is authenticated: the same body under another key id does not open.
    const other = newWorkspaceKey();
    const relabeled = sealed.replace(key.id, other.id);
    assert.equal(openWith({ ...key, id: other.id }, "ws1", relabeled), null);
  });

  it("an enc:v1 value still opens in its own workspace only", () => {
    const raw = newDataKey();
    const legacy = seal(raw, Buffer.from("old"), "ws1", "enc:v1:");
    const key = dataKeyOf(raw.toString("base64url"));
    assert.ok(isEncrypted(legacy));
    assert.equal(ciphertextKeyId(legacy), null);
    assert.equal(openWith(key, "ws1", legacy), "old");
    assert.equal(openWith(key, "ws2", legacy), null);
  });
});
