// Workspace <-> files in the Windmill CLI's layout, and git push/pull. The layout constants below
// are shared with the REST API today; serialisation and git transport arrive with the git sync work.

/** File suffixes of the Windmill CLI's sync layout. */
export const SYNC_SUFFIXES = {
  scriptMeta: ".script.yaml",
  flowDir: ".flow",
  resource: ".resource.yaml",
  variable: ".variable.yaml",
  schedule: ".schedule.yaml",
  folderMeta: "folder.meta.yaml",
  settings: "wmill.yaml",
} as const;

/** The code file extension Windmill's CLI uses for each language. */
export const CODE_EXTENSIONS: Record<string, string> = {
  bash: ".sh",
  python3: ".py",
  bun: ".ts",
  deno: ".deno.ts",
  postgresql: ".pg.sql",
};
