// What a python3 script without a `# requirements:` block needs, inferred from its imports as
// Windmill does: every imported module that is neither the standard library, nor a relative
// import, nor a workspace script (`f.…`, `u.…`), nor the bundled `wmill` client, named by the
// package pip installs it from.

/** Python 3.11's `sys.stdlib_module_names` without the private (`_…`) ones, plus later additions. */
const STDLIB = new Set(
  (
    "abc aifc antigravity argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb binascii " +
    "bisect builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop collections colorsys " +
    "compileall concurrent configparser contextlib contextvars copy copyreg crypt csv ctypes curses dataclasses " +
    "datetime dbm decimal difflib dis distutils doctest email encodings ensurepip enum errno faulthandler fcntl " +
    "filecmp fileinput fnmatch fractions ftplib functools gc genericpath getopt getpass gettext glob graphlib " +
    "grp gzip hashlib heapq hmac html http idlelib imaplib imghdr imp importlib inspect io ipaddress itertools " +
    "json keyword lib2to3 linecache locale logging lzma mailbox mailcap marshal math mimetypes mmap " +
    "modulefinder msilib msvcrt multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode operator " +
    "optparse os ossaudiodev pathlib pdb pickle pickletools pipes pkgutil platform plistlib poplib posix " +
    "posixpath pprint profile pstats pty pwd py_compile pyclbr pydoc pydoc_data pyexpat queue quopri random re " +
    "readline reprlib resource rlcompleter runpy sched secrets select selectors shelve shlex shutil signal site " +
    "smtpd smtplib sndhdr socket socketserver spwd sqlite3 sre_compile sre_constants sre_parse ssl stat " +
    "statistics string stringprep struct subprocess sunau symtable sys sysconfig syslog tabnanny tarfile " +
    "telnetlib tempfile termios textwrap this threading time timeit tkinter token tokenize tomllib trace " +
    "traceback tracemalloc tty turtle turtledemo types typing unicodedata unittest urllib uu uuid venv warnings " +
    "wave weakref webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp zipfile zipimport zlib zoneinfo"
  ).split(" "),
);

/** Modules the worker provides, or that name the workspace's own scripts (`from f.folder.script import x`). */
const PROVIDED = new Set(["wmill", "f", "u"]);

/** Import names whose pip package is named otherwise (pip normalizes `_`/`-`/case by itself). */
const PACKAGE_OF: Record<string, string> = {
  Bio: "biopython",
  Crypto: "pycryptodome",
  Cryptodome: "pycryptodomex",
  Levenshtein: "levenshtein",
  MySQLdb: "mysqlclient",
  OpenSSL: "pyopenssl",
  PIL: "pillow",
  Xlib: "python-xlib",
  apiclient: "google-api-python-client",
  attr: "attrs",
  barcode: "python-barcode",
  bs4: "beautifulsoup4",
  bson: "pymongo",
  cairo: "pycairo",
  cv2: "opencv-python",
  dateutil: "python-dateutil",
  discord: "discord.py",
  dns: "dnspython",
  docx: "python-docx",
  dotenv: "python-dotenv",
  faiss: "faiss-cpu",
  fitz: "pymupdf",
  fpdf: "fpdf2",
  gi: "pygobject",
  git: "gitpython",
  github: "pygithub",
  gitlab: "python-gitlab",
  googleapiclient: "google-api-python-client",
  grpc: "grpcio",
  jose: "python-jose",
  jwt: "pyjwt",
  kafka: "kafka-python",
  ldap: "python-ldap",
  magic: "python-magic",
  mpl_toolkits: "matplotlib",
  multipart: "python-multipart",
  nacl: "pynacl",
  osgeo: "gdal",
  pkg_resources: "setuptools",
  pptx: "python-pptx",
  psycopg: "psycopg[binary]",
  psycopg2: "psycopg2-binary",
  serial: "pyserial",
  skimage: "scikit-image",
  sklearn: "scikit-learn",
  slugify: "python-slugify",
  smb: "pysmb",
  socks: "pysocks",
  speech_recognition: "speechrecognition",
  telegram: "python-telegram-bot",
  usb: "pyusb",
  websocket: "websocket-client",
  wx: "wxpython",
  yaml: "pyyaml",
  zmq: "pyzmq",
};

/** Dotted imports whose package is named by more than the first part. */
const DOTTED_PACKAGE_OF: Record<string, string> = {
  "google.protobuf": "protobuf",
  "google.auth": "google-auth",
  "google.oauth2": "google-auth",
  "google.api_core": "google-api-core",
  "google.generativeai": "google-generativeai",
  "google.genai": "google-genai",
  "google.ads": "google-ads",
  "mysql.connector": "mysql-connector-python",
  "snowflake.connector": "snowflake-connector-python",
  "snowflake.snowpark": "snowflake-snowpark-python",
  "ruamel.yaml": "ruamel.yaml",
  "backports.zoneinfo": "backports.zoneinfo",
};

/** The pip package that provides `module` (dotted), or null when nothing needs installing. */
export function packageOfImport(module: string): string | null {
  const parts = module.split(".");
  const top = parts[0] ?? "";
  if (top === "" || top.startsWith("_") || STDLIB.has(top) || PROVIDED.has(top)) return null;
  for (let n = Math.min(parts.length, 3); n >= 2; n--) {
    const known = DOTTED_PACKAGE_OF[parts.slice(0, n).join(".")];
    if (known) return known;
  }
  // Namespace packages: google.cloud.bigquery → google-cloud-bigquery, azure.storage.blob → azure-storage-blob.
  if (top === "google" && parts[1] === "cloud" && parts[2]) return `google-cloud-${parts[2]}`;
  if (top === "azure" && parts[1]) {
    const rest = parts.slice(1).filter((part) => /^[a-z0-9_]+$/.test(part));
    return `azure-${rest.slice(0, parts[1] === "storage" || parts[1] === "mgmt" ? 2 : 1).join("-")}`;
  }
  return PACKAGE_OF[top] ?? top;
}

const IDENT = String.raw`[A-Za-z_][A-Za-z0-9_]*`;
const DOTTED = String.raw`${IDENT}(?:\s*\.\s*${IDENT})*`;
const IMPORT_LINE = new RegExp(
  String.raw`^import\s+(${DOTTED}(?:\s+as\s+${IDENT})?(?:\s*,\s*${DOTTED}(?:\s+as\s+${IDENT})?)*)`,
);
const FROM_LINE = new RegExp(String.raw`^from\s+(\.*)\s*(${DOTTED})?\s+import\b(.*)$`);
// `from google.cloud import bigquery`: the package is named by what is imported from these.
const NAMESPACES = new Set(["google", "google.cloud", "azure", "azure.storage", "azure.mgmt"]);
const PIN = /#\s*(?:pin|repin)\s*:\s*(.+?)\s*$/;

/**
 * The code's logical lines with strings (docstrings included) blanked out, each with the
 * comment it ends with: imports are found only in code, never in a string that looks like one.
 */
function codeLines(content: string): { code: string; comment: string }[] {
  const lines: { code: string; comment: string }[] = [];
  let code = "";
  let comment = "";
  let quote: string | null = null;
  let depth = 0;
  for (let i = 0; i < content.length; i++) {
    const c = content[i]!;
    if (quote) {
      if (c === "\\") {
        i++;
      } else if (content.startsWith(quote, i)) {
        i += quote.length - 1;
        quote = null;
        code += '""';
      } else if (c === "\n" && quote.length === 1) {
        quote = null;
      }
      continue;
    }
    if (c === "#") {
      const end = content.indexOf("\n", i);
      comment = content.slice(i, end === -1 ? content.length : end);
      i = (end === -1 ? content.length : end) - 1;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = content.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
      i += quote.length - 1;
      continue;
    }
    if (c === "\\" && content[i + 1] === "\n") {
      i++;
      code += " ";
      continue;
    }
    if (c === "(" || c === "[" || c === "{") depth++;
    if ((c === ")" || c === "]" || c === "}") && depth > 0) depth--;
    if (c === "\n" && depth === 0) {
      lines.push({ code, comment });
      code = "";
      comment = "";
      continue;
    }
    code += c === "\n" ? " " : c;
  }
  lines.push({ code, comment });
  return lines;
}

/** The modules a script imports (dotted, absolute imports only), each with its `# pin:` if any. */
export function pythonImports(content: string): { module: string; pin: string | null }[] {
  const found: { module: string; pin: string | null }[] = [];
  for (const { code, comment } of codeLines(content)) {
    const pin = PIN.exec(comment)?.[1] ?? null;
    for (const raw of code.split(";")) {
      const statement = raw.trim();
      const imported = IMPORT_LINE.exec(statement);
      if (imported) {
        for (const part of (imported[1] ?? "").split(",")) {
          const module = part
            .trim()
            .split(/\s+as\s+/)[0]!
            .replace(/\s+/g, "");
          if (module) found.push({ module, pin });
        }
        continue;
      }
      const from = FROM_LINE.exec(statement);
      // `from . import x`, `from .mod import x`: the script's own package.
      if (!from || from[1] || !from[2]) continue;
      const module = from[2].replace(/\s+/g, "");
      if (!NAMESPACES.has(module)) {
        found.push({ module, pin });
        continue;
      }
      for (const name of (from[3] ?? "").replace(/[()]/g, "").split(",")) {
        const imported = name.trim().split(/\s+/)[0];
        if (imported && /^[A-Za-z_][A-Za-z0-9_]*$/.test(imported))
          found.push({ module: `${module}.${imported}`, pin });
      }
    }
  }
  return found;
}

/**
 * Requirements inferred from the imports, in order of first import, one per package; an import
 * line's `# pin: <requirement>` comment replaces what it infers (and any other import's
 * inference of the same package).
 */
export function inferredPythonRequirements(content: string): string[] {
  const byName = new Map<string, string>();
  for (const { module, pin } of pythonImports(content)) {
    const requirement = pin ?? packageOfImport(module);
    if (requirement === null) continue;
    const name = /^[A-Za-z0-9._-]+/.exec(requirement)?.[0] ?? requirement;
    const key = name.toLowerCase().replace(/[-_.]+/g, "-");
    if (pin || !byName.has(key)) byName.set(key, requirement);
  }
  return [...byName.values()];
}
