// Prisma CLI configuration. Prisma 7's CLI cannot run on machines without access to Prisma's
// binary host, so we pin 6.19.3 and run its schema engine as WebAssembly through the pg adapter.
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { defineConfig } from "prisma/config";

// prisma/orm#27403: the wasm engine chokes on catalog columns of type `name` (OID 19) and
// `char` (OID 18). Report them as `text` (OID 25) — in the CLI process only.
const originalQuery = pg.Pool.prototype.query;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
pg.Pool.prototype.query = async function patchedQuery(this: pg.Pool, ...args: any[]): Promise<any> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const result = await (originalQuery as any).apply(this, args);
  for (const field of result?.fields ?? []) {
    if (field.dataTypeID === 19 || field.dataTypeID === 18) field.dataTypeID = 25;
  }
  return result;
};

function connectionFromUrl(url: string) {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 5432),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: decodeURIComponent(parsed.pathname.slice(1)),
  };
}

// The schema's datasource reads DATABASE_URL; `prisma generate` needs no database, so a
// placeholder keeps it working on a machine with none configured.
process.env.DATABASE_URL ??= "postgresql://localhost:5432/postgres";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  experimental: { adapter: true },
  engine: "js",
  adapter: async () => new PrismaPg(connectionFromUrl(process.env.DATABASE_URL!)),
});
