// The masker lives in core: the server masks an agent's job output with it too (agents/work.ts).
export { MIN_SECRET_CHARS, SECRET_MASK, SecretMasker } from "@millrace/core";
