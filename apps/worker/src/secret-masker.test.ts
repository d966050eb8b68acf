import assert from "node:assert/strict";
import { test } from "node:test";
import { SecretMasker } from "./secret-masker.ts";

function stream(masker: SecretMasker, chunks: string[]): string {
  return chunks.map((chunk) => masker.push(chunk)).join("") + masker.end();
}

test("masks every occurrence, the longest secret first; short values are left alone", () => {
  const masker = new SecretMasker();
  assert.equal(masker.empty, true);
  masker.add("abc");
  assert.equal(masker.empty, true, "3 characters: not masked");
  masker.add("hunter2");
  masker.add("hunter2-long");
  assert.equal(masker.mask("a hunter2 and hunter2-long, abc"), "a *** and ***, abc");
});

test("a secret split across chunks is masked; text that only looks like its start is not lost", () => {
  const masker = new SecretMasker();
  masker.add("s3cr3t-value");
  assert.equal(stream(masker, ["x s3c", "r3t-va", "lue y\n"]), "x *** y\n");
  assert.equal(stream(masker, ["s", "3", "c", "r", "3", "t", "-", "value", "\n"]), "***\n");
  // Held back while it could be the secret's start, then written as is.
  assert.equal(masker.push("ends with s3cr"), "ends with ");
  assert.equal(masker.push("ew"), "s3crew");
  assert.equal(stream(masker, ["trailing s3cr3t"]), "trailing s3cr3t");
});

test("results: strings and keys at any depth", () => {
  const masker = new SecretMasker();
  masker.add("p4ssw0rd");
  assert.deepEqual(masker.maskValue({ a: ["x p4ssw0rd", 1, null], p4ssw0rd: { b: "p4ssw0rd" } }), {
    a: ["x ***", 1, null],
    "***": { b: "***" },
  });
  assert.equal(new SecretMasker().maskValue("p4ssw0rd"), "p4ssw0rd");
});

test("regular expression characters in a secret are taken literally", () => {
  const masker = new SecretMasker();
  masker.add("a.b*c(d)[e]$");
  assert.equal(masker.mask("a.b*c(d)[e]$ axbbc"), "*** axbbc");
});
