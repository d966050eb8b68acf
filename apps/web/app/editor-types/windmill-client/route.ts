import fs from "node:fs/promises";
import path from "node:path";

// The windmill-client type declarations for the script editor (Monaco adds them as the module
// `windmill-client`): read from the installed package, so the editor works offline. Public
// content (the package is open source), answered to anyone and cached by the browser.

let cached: Promise<string> | null = null;

async function packageDir(): Promise<string> {
  // The server runs from the repository root or from apps/web.
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", "windmill-client");
    try {
      await fs.access(path.join(candidate, "package.json"));
      return candidate;
    } catch {
      if (path.dirname(dir) === dir) throw new Error("windmill-client is not installed");
    }
  }
}

async function collect(root: string, dir: string, files: Record<string, string>): Promise<void> {
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await collect(root, full, files);
    else if (entry.name.endsWith(".d.ts")) files[path.relative(root, full)] = await fs.readFile(full, "utf8");
  }
}

async function load(): Promise<string> {
  const root = await packageDir();
  const { version } = JSON.parse(await fs.readFile(path.join(root, "package.json"), "utf8")) as {
    version: string;
  };
  const files: Record<string, string> = {};
  await collect(root, path.join(root, "dist"), files);
  return JSON.stringify({ version, files });
}

export async function GET(): Promise<Response> {
  cached ??= load().catch((error: unknown) => {
    cached = null;
    throw error;
  });
  try {
    return new Response(await cached, {
      headers: { "content-type": "application/json", "cache-control": "public, max-age=3600" },
    });
  } catch (error) {
    return Response.json({ error: (error as Error).message }, { status: 500 });
  }
}
