/**
 * Pyodide's standard library with bytecode: the npm package's `python_stdlib.zip` holds only
 * sources, so every start of Python compiles each module it imports (Pyodide's own start-up,
 * `asyncio`, `pickle` and the rest of what Kiln imports) from source, in WebAssembly that is
 * itself still being compiled. Kiln serves the same archive with a `.pyc` beside each module
 * that a start imports, compiled here, at build time, by the same Python (Pyodide in Node).
 * The sources stay in it unchanged, for tracebacks and `inspect`.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

/** A first run, as Kiln's worker makes it (its start-up imports are what a start imports). */
const FIRST_RUN = "x = 1\nprint(x)";

/**
 * In the archive `stdlib` (the bytes of Pyodide's `python_stdlib.zip`), a `.pyc` beside each
 * module that Pyodide's start-up, Kiln's worker's set-up and a {@link FIRST_RUN} import:
 * "unchecked hash" bytecode (PEP 552), which the import system uses without reading the
 * source, whose code objects name the source's path in the archive as Python sees it. Entries
 * already there are copied as they are.
 */
async function addBytecode(pyodideDir: string, kilnDir: string, stdlib: Uint8Array): Promise<Uint8Array> {
  const { loadPyodide } = await import("pyodide");
  const py = await loadPyodide({ indexURL: `${pyodideDir}/`, stdout: () => undefined, stderr: () => undefined });
  py.FS.mkdirTree("/kiln-build/kiln");
  for (const file of readdirSync(kilnDir).filter((name) => name.endsWith(".py"))) {
    py.FS.writeFile(`/kiln-build/kiln/${file}`, readFileSync(path.join(kilnDir, file)));
  }
  py.runPython("import sys; sys.path.insert(0, '/kiln-build')");
  const runner = py.pyimport("kiln.runner");
  runner.setup();
  py.pyimport("kiln.stop");
  await runner.run_cell(FIRST_RUN);
  py.FS.writeFile("/kiln-build/stdlib.zip", stdlib);
  py.runPython(`
import importlib.util, marshal, sys, zipfile
archive = next(entry for entry in sys.path if entry.endswith(".zip"))
imported = set()
for module in list(sys.modules.values()):
    source = getattr(module, "__file__", None) or ""
    if source.startswith(archive + "/") and source.endswith(".py"):
        imported.add(source[len(archive) + 1:])
with zipfile.ZipFile("/kiln-build/stdlib.zip", "a", zipfile.ZIP_DEFLATED, compresslevel=9) as bundle:
    names = set(bundle.namelist())
    for info in sorted(bundle.infolist(), key=lambda info: info.filename):
        if info.filename not in imported or info.filename + "c" in names:
            continue
        source = bundle.read(info)
        code = compile(source, f"{archive}/{info.filename}", "exec", dont_inherit=True)
        flags = (1).to_bytes(4, "little")  # hash-based, unchecked
        pyc = importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(source) + marshal.dumps(code)
        entry = zipfile.ZipInfo(info.filename + "c", date_time=info.date_time)
        entry.external_attr = info.external_attr
        bundle.writestr(entry, pyc, zipfile.ZIP_DEFLATED, 9)
`);
  return py.FS.readFile("/kiln-build/stdlib.zip");
}

const generated = new Map<string, Promise<Uint8Array>>();

/**
 * Pyodide's standard library with bytecode (see above), made once per content of its inputs
 * (Pyodide's archive, Kiln's package, this file) and kept in `node_modules/.cache`.
 */
export function stdlibWithBytecode(pyodideDir: string, kilnDir: string, cacheDir: string): Promise<Uint8Array> {
  const stdlib = readFileSync(path.join(pyodideDir, "python_stdlib.zip"));
  const hash = createHash("sha256").update(stdlib).update(readFileSync(new URL(import.meta.url)));
  for (const file of readdirSync(kilnDir).sort()) if (file.endsWith(".py")) hash.update(file).update(readFileSync(path.join(kilnDir, file)));
  const key = hash.digest("hex").slice(0, 16);
  let made = generated.get(key);
  if (!made) {
    const cached = path.join(cacheDir, `python_stdlib-${key}.zip`);
    made = existsSync(cached)
      ? Promise.resolve(new Uint8Array(readFileSync(cached)))
      : addBytecode(pyodideDir, kilnDir, stdlib).then((bytes) => {
          mkdirSync(cacheDir, { recursive: true });
          // Whole or not at all: a build stopped mid-write leaves no half archive to be served later.
          const partial = `${cached}.${process.pid}.part`;
          writeFileSync(partial, bytes);
          renameSync(partial, cached);
          return bytes;
        });
    generated.set(key, made);
    made.catch(() => generated.delete(key));
  }
  return made;
}
