import path from "node:path";
import type { NextConfig } from "next";

const config: NextConfig = {
  // Workspace packages ship TypeScript sources (`.ts` imports); Next compiles them.
  transpilePackages: ["@millrace/core", "@millrace/db", "@millrace/runtime", "@millrace/sync"],
  // Node-only dependencies with native parts or dynamic requires stay outside the bundle.
  serverExternalPackages: [
    "pg",
    "pg-boss",
    "@node-rs/argon2",
    "typescript",
    "@prisma/client",
    "@prisma/adapter-pg",
    // Flow expressions run in QuickJS compiled to WebAssembly: the .wasm file is read from the package.
    "quickjs-emscripten-core",
    "@jitl/quickjs-wasmfile-release-sync",
    // User patterns run on RE2 compiled to WebAssembly (see packages/core/src/linear-regexp.ts).
    "re2-wasm",
  ],
  turbopack: { root: path.resolve(import.meta.dirname, "../..") },
  poweredByHeader: false,
  typescript: { ignoreBuildErrors: true },
};

export default config;
