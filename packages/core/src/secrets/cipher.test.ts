import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { deriveInstanceKey, instanceKeyProblem, newDataKey, open, seal, SecretKeyError } from "./cipher.ts";

describe("secret cipher", () => {
  it("round-trips and authenticates the context", () => {
    const key = newDataKey();
    const sealed = seal(key, Buffer.from("hunter2 ✓"), "ws1", "enc:v1:");
    assert.match(sealed, /^enc:v1:[A-Za-z0-9_-]+$/);
    assert.ok(!sealed.includes("hunter2"));
    assert.equal(open(key, sealed, "ws1", "enc:v1:")?.toString(), "hunter2 ✓");
    assert.equal(open(key, sealed, "ws2", "enc:v1:"), null, "another workspace's context does not open it");
    assert.equal(open(newDataKey(), sealed, "ws1", "enc:v1:"), null, "another key does not open it");
    const tampered = sealed.slice(0, -1) + (sealed.endsWith("A") ? "B" : "A");
    assert.equal(open(key, tampered, "ws1", "enc:v1:"), null, "tampering is detected");
    assert.equal(open(key, "enc:v1:short", "ws1", "enc:v1:"), null);
    assert.equal(open(key, "plain", "ws1", "enc:v1:"), null);
  });

  it("encrypts the same value differently every time", () => {
    const key = newDataKey();
    assert.notEqual(seal(key, Buffer.from("x"), "c", "p:"), seal(key, Buffer.from("x"), "c", "p:"));
  });

  it("derives a stable key and refuses short or padded instance keys", () => {
    const raw = "a".repeat(32);
    assert.deepEqual(deriveInstanceKey(raw), deriveInstanceKey(raw));
    assert.notDeepEqual(deriveInstanceKey(raw), deriveInstanceKey("b".repeat(32)));
    assert.match(instanceKeyProblem("short") ?? "", /at least 32/);
    assert.match(instanceKeyProblem(` ${raw}`) ?? "", /whitespace/);
    assert.throws(() => deriveInstanceKey("short"), SecretKeyError);
  });
});
