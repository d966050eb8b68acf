// Test helpers: a pure-Python wheel written by hand and a PEP 503 "simple" index serving a folder
// of wheels over HTTP on 127.0.0.1 (PyPI is not reachable from test machines).
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

/** Writes `<dist>-<version>-py3-none-any.whl` into `dir`: one module `<module>` with `source`. */
export function buildWheel(
  dir: string,
  dist: string,
  version: string,
  module: string,
  source: string,
): string {
  const script = `
import base64, hashlib, sys, zipfile
dir, dist, version, module, source = sys.argv[1:6]
name = dist.replace("-", "_")
info = f"{name}-{version}.dist-info"
files = {
  f"{module}/__init__.py": source,
  f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {dist}\\nVersion: {version}\\n",
  f"{info}/WHEEL": "Wheel-Version: 1.0\\nGenerator: millrace-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
record = []
for path, text in files.items():
  data = text.encode()
  digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
  record.append(f"{path},sha256={digest},{len(data)}")
record.append(f"{info}/RECORD,,")
wheel = f"{dir}/{name}-{version}-py3-none-any.whl"
with zipfile.ZipFile(wheel, "w") as z:
  for path, text in files.items():
    z.writestr(path, text)
  z.writestr(f"{info}/RECORD", "\\n".join(record) + "\\n")
print(wheel)
`;
  const result = spawnSync("/usr/bin/python3", ["-c", script, dir, dist, version, module, source], {
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`could not build the wheel: ${result.stderr}`);
  return result.stdout.trim();
}

function normalize(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

/** Serves `dir`'s wheels as a simple index; `requests` counts the requests it answered. */
export async function serveIndex(
  dir: string,
): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    const url = new URL(req.url ?? "/", "http://localhost");
    const parts = url.pathname.split("/").filter(Boolean);
    if (parts[0] === "simple" && parts[1]) {
      const wanted = normalize(parts[1]);
      const links = readdirSync(dir)
        .filter((file) => file.endsWith(".whl") && normalize(file.split("-")[0] ?? "") === wanted)
        .map((file) => `<a href="/files/${file}">${file}</a>`);
      if (links.length === 0) return void res.writeHead(404).end("not found");
      res
        .writeHead(200, { "content-type": "text/html" })
        .end(`<html><body>${links.join("\n")}</body></html>`);
      return;
    }
    if (parts[0] === "files" && parts[1] && !parts[1].includes("..")) {
      try {
        const data = readFileSync(path.join(dir, parts[1]));
        res.writeHead(200, { "content-type": "application/octet-stream" }).end(data);
      } catch {
        res.writeHead(404).end("not found");
      }
      return;
    }
    res.writeHead(404).end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/simple`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
