import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPyodide, type PyodideAPI } from "pyodide";
import { pyodideDir } from "./pyodide-core";
import { stdlibWithBytecode } from "./stdlib-bytecode";

const kilnDir = fileURLToPath(new URL("../workers/python/kiln", import.meta.url));
const stockPath = path.join(pyodideDir(), "python_stdlib.zip");

describe("Pyodide's standard library with bytecode", () => {
  let cacheDir: string;
  let stock: PyodideAPI;
  let withBytecode: PyodideAPI;

  beforeAll(async () => {
    cacheDir = mkdtempSync(path.join(tmpdir(), "kiln-stdlib-"));
    const bytes = await stdlibWithBytecode(pyodideDir(), kilnDir, cacheDir);
    stock = await loadPyodide();
    stock.FS.writeFile("/tmp/stock.zip", readFileSync(stockPath));
    stock.FS.writeFile("/tmp/kiln.zip", bytes);
    writeFileSync(path.join(cacheDir, "stdlib.zip"), bytes);
    withBytecode = await loadPyodide({ stdLibURL: path.join(cacheDir, "stdlib.zip") });
  }, 120_000);

  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  it("keeps every file of Pyodide's archive as it is, and adds bytecode for the modules a start imports", () => {
    const report = stock.runPython(`
import json, zipfile
stock, kiln = zipfile.ZipFile("/tmp/stock.zip"), zipfile.ZipFile("/tmp/kiln.zip")
added = sorted(set(kiln.namelist()) - set(stock.namelist()))
json.dumps({
  "same": all(kiln.read(name) == stock.read(name) for name in stock.namelist()),
  "added": added,
  "onlyBytecode": all(name.endswith(".pyc") and name[:-1] in stock.namelist() for name in added),
})`) as string;
    const { same, added, onlyBytecode } = JSON.parse(report) as { same: boolean; added: string[]; onlyBytecode: boolean };
    expect(same).toBe(true);
    expect(onlyBytecode).toBe(true);
    // Pyodide's start-up, asyncio, and what Kiln's package imports.
    expect(added).toEqual(expect.arrayContaining(["_pyodide/_base.pyc", "asyncio/base_events.pyc", "pickle.pyc", "shlex.pyc", "ast.pyc"]));
    // A module nothing at start-up imports stays source only.
    expect(added).not.toContain("statistics.pyc");
  });

  it("is imported from its bytecode, with the same sources in tracebacks and inspect", () => {
    const probe = `
import inspect, json, pickle, traceback
try:
    json.loads("{")
except ValueError:
    trace = traceback.format_exc()
"\\n".join([pickle.__spec__.cached, inspect.getsource(json.dumps).splitlines()[0], trace])`;
    const [cached, source, ...trace] = (withBytecode.runPython(probe) as string).split("\n");
    const [stockCached] = (stock.runPython(probe) as string).split("\n");
    // Pyodide's own archive compiles pickle from its source: no bytecode beside it.
    expect(stockCached).toMatch(/__pycache__\/pickle\.cpython-\d+\.pyc$/);
    expect(cached).toMatch(/^\/lib\/python\d+\.zip\/pickle\.pyc$/);
    expect(source).toBe("def dumps(obj, *, skipkeys=False, ensure_ascii=True, check_circular=True,");
    expect(trace.join("\n")).toMatch(/File "\/lib\/python\d+\.zip\/json\/decoder\.py", line \d+, in raw_decode\n\s+obj, end = self\.scan_once\(s, idx\)/);
  });
});
