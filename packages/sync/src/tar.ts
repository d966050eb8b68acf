// A ustar archive of text files: what Windmill's `workspaces/tarball` answers when asked for a tar
// (wmill asks for a zip first and falls back to a tar on "Invalid Archive Type"). Hand-written:
// regular files only, a fixed mode and mtime (the same files make the same bytes).

const BLOCK = 512;

function splitName(name: string): { prefix: string; name: string } {
  if (Buffer.byteLength(name) <= 100) return { prefix: "", name };
  // ustar keeps up to 155 bytes of leading folders apart from the last 100 bytes of the name.
  for (let cut = name.indexOf("/"); cut > 0; cut = name.indexOf("/", cut + 1)) {
    const prefix = name.slice(0, cut);
    const rest = name.slice(cut + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100) return { prefix, name: rest };
  }
  throw new Error(`${name}: path too long for the archive (at most 100 bytes after 155 of folders)`);
}

function header(file: string, size: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  const put = (value: string, offset: number, length: number) => block.write(value, offset, length, "utf8");
  const octal = (n: number, length: number) => `${n.toString(8).padStart(length - 1, "0")}\0`;
  const { prefix, name } = splitName(file);
  put(name, 0, 100);
  put(octal(0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(0, 12), 136, 12);
  put("        ", 148, 8);
  put("0", 156, 1);
  put("ustar\0", 257, 6);
  put("00", 263, 2);
  put(prefix, 345, 155);
  let sum = 0;
  for (const byte of block) sum += byte;
  put(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8);
  return block;
}

/** The files, in the map's order, as one uncompressed ustar archive. */
export function tarArchive(files: Map<string, string>): Buffer {
  const blocks: Buffer[] = [];
  for (const [name, text] of files) {
    const body = Buffer.from(text, "utf8");
    blocks.push(header(name, body.length), body, Buffer.alloc((BLOCK - (body.length % BLOCK)) % BLOCK));
  }
  blocks.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(blocks);
}
