/** pg-boss 12 needs Node 22.12+ but does not refuse older versions itself; we do, at boot. */
export function assertNodeVersion(minimum = "22.12.0"): void {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  const [wantMajor = 0, wantMinor = 0] = minimum.split(".").map(Number);
  if (major < wantMajor || (major === wantMajor && minor < wantMinor)) {
    console.error(
      `Millrace needs Node.js ${minimum} or newer; this is ${process.versions.node}. ` +
        `Run it through npm (\`npm start\`), which uses the Node 24 installed in node_modules.`,
    );
    process.exit(1);
  }
}
