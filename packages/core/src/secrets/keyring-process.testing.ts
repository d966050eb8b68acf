// A process of its own with a keyring, for workspace-key.int.test.ts: one JSON command per line on
// stdin ({ command: "decrypt" | "encrypt", ws, value }), one JSON answer per line on stdout.
// Arguments: the database URL and the (test) instance key.
import readline from "node:readline";
import { createPool } from "@millrace/db";
import { createKeyring } from "./keyring.ts";

const [databaseUrl, instanceKey] = process.argv.slice(2);
const pool = createPool(databaseUrl!, { max: 2 });
const keyring = createKeyring(instanceKey);
for await (const line of readline.createInterface({ input: process.stdin })) {
  const { command, ws, value } = JSON.parse(line) as { command: string; ws: string; value: string };
  try {
    const ok =
      command === "decrypt" ? await keyring.decrypt(pool, ws, value) : await keyring.encrypt(pool, ws, value);
    process.stdout.write(JSON.stringify({ ok }) + "\n");
  } catch (error) {
    process.stdout.write(JSON.stringify({ error: String(error) }) + "\n");
  }
}
await pool.end();
