import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { pyodideDir } from "../../vite/pyodide-core.ts";

// Chosen at run time by playwright.config.ts (inherited by every test worker), like the preview port.
export const PACKAGE_SERVER_PORT = Number(process.env.KILN_PACKAGE_PORT ?? 4180);
export const PACKAGE_BASE = `http://127.0.0.1:${PACKAGE_SERVER_PORT}/`;
export const TEST_LOCK_FILE = `${PACKAGE_BASE}pyodide-lock.json`;

/** A pure-Python wheel, built with the host's python3 (zipfile). */
function buildWheel(dir: string, name: string, version: string, source: string): string {
  const fileName = `${name}-${version}-py3-none-any.whl`;
  const script = `
import sys, zipfile
path, name, version, source = sys.argv[1:5]
info = f"{name}-{version}.dist-info"
with zipfile.ZipFile(path, "w") as whl:
    whl.writestr(f"{name}/__init__.py", source)
    whl.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n")
    whl.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\\nGenerator: kiln-tests\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
    whl.writestr(f"{info}/RECORD", "")
`;
  execFileSync("python3", ["-c", script, path.join(dir, fileName), name, version, source]);
  return fileName;
}

function entry(name: string, fileName: string, sha256: string, depends: string[] = []) {
  return {
    name,
    version: "1.0.0",
    file_name: fileName,
    install_dir: "site",
    package_type: "package",
    sha256,
    imports: [name],
    depends,
    unvendored_tests: false,
  };
}

const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/**
 * Pyodide's own lock file plus test packages:
 * - `kilntiny` (depends on `kilntinydep`): served, checksums right;
 * - `ghostpkg`: listed, never served (404);
 * - `badhash`: served, but the lock file's checksum is wrong.
 */
export function buildPackageFixtures(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const dep = buildWheel(dir, "kilntinydep", "1.0.0", 'WORD = "tiny"\n');
  const tiny = buildWheel(dir, "kilntiny", "1.0.0", 'from kilntinydep import WORD\nGREETING = f"hello from a {WORD} wheel"\n');
  const bad = buildWheel(dir, "badhash", "1.0.0", "VALUE = 1\n");
  const lock = JSON.parse(readFileSync(path.join(pyodideDir(), "pyodide-lock.json"), "utf8"));
  lock.packages.kilntinydep = entry("kilntinydep", dep, sha(path.join(dir, dep)));
  lock.packages.kilntiny = entry("kilntiny", tiny, sha(path.join(dir, tiny)), ["kilntinydep"]);
  lock.packages.ghostpkg = entry("ghostpkg", "ghostpkg-1.0.0-py3-none-any.whl", "0".repeat(64));
  lock.packages.badhash = entry("badhash", bad, "f".repeat(64));
  writeFileSync(path.join(dir, "pyodide-lock.json"), JSON.stringify(lock));
}

/** A static server for the fixtures, with the headers an opaque-origin worker needs. */
export function servePackages(dir: string, port = PACKAGE_SERVER_PORT): Promise<Server> {
  const server = createServer((req, res) => {
    const name = path.basename(decodeURIComponent((req.url ?? "/").split("?")[0]));
    res.setHeader("Access-Control-Allow-Origin", "*");
    res.setHeader("Cross-Origin-Resource-Policy", "cross-origin");
    try {
      const body = readFileSync(path.join(dir, name));
      res.writeHead(200, { "Content-Type": name.endsWith(".json") ? "application/json" : "application/octet-stream" });
      res.end(body);
    } catch {
      res.writeHead(404, { "Content-Type": "text/plain" });
      res.end("not found");
    }
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}
