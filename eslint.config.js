// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const processEnvBan = {
  "no-restricted-properties": [
    "error",
    { object: "process", property: "env", message: "Read environment variables in the app's env.ts only." },
  ],
};

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "**/.next/**",
      "packages/db/src/generated/**",
      "**/next-env.d.ts",
      ".data/**",
      // A Windmill repository (user scripts in wmill's layout), not Millrace's code.
      "apps/cli/src/fixtures/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-undef": "off",
      ...processEnvBan,
    },
  },
  // Places that legitimately read the environment: env modules, entry scripts, tests, tooling.
  {
    files: [
      "**/env.ts",
      "scripts/**",
      "e2e/**",
      "prisma.config.ts",
      "**/*.test.ts",
      "**/*.drill.ts",
      "**/testing.ts",
      "**/testing/**",
      "packages/db/src/migrate.ts",
    ],
    rules: { "no-restricted-properties": "off" },
  },
  // Dependencies point one way: runtime and sync import no database and no transport.
  {
    files: ["packages/runtime/**", "packages/sync/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["@millrace/*"], message: "runtime and sync depend on nothing of ours." },
            {
              group: ["@prisma/*", "pg", "pg-boss", "@trpc/*", "next", "next/*"],
              message: "no database or transport here.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["packages/core/**", "packages/db/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@trpc/*", "next", "next/*", "next-auth", "next-auth/*"],
              message: "core is transport-free.",
            },
            {
              group: ["@millrace/web", "@millrace/worker", "@millrace/cli"],
              message: "core never imports an app.",
            },
          ],
        },
      ],
    },
  },
);
