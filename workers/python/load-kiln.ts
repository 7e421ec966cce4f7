// Kiln's Python package under real Pyodide (Node), for the unit tests of its Python side.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { loadPyodide, type PyodideAPI } from "pyodide";
import type { PyProxy } from "pyodide/ffi";

const KILN_DIR = path.join(import.meta.dirname, "kiln");

/** A Pyodide with Kiln's package on its path, and `kiln.runner` imported (not set up). */
export async function loadKiln(): Promise<{ py: PyodideAPI; runner: PyProxy }> {
  const py = await loadPyodide();
  py.FS.mkdirTree("/kiln-site/kiln");
  for (const file of readdirSync(KILN_DIR)) {
    py.FS.writeFile(`/kiln-site/kiln/${file}`, readFileSync(path.join(KILN_DIR, file)));
  }
  py.runPython("import sys; sys.path.insert(0, '/kiln-site')");
  return { py, runner: py.pyimport("kiln.runner") };
}

/** A cell's result, as `kiln.runner.run_cell` returns it (see python-api.ts). */
export interface Cell {
  status: string;
  value?: Record<string, string>;
  error?: { ename: string; evalue: string; traceback: string };
  exit_code?: number;
}

/** Run `code` as a cell and take its result as plain data. */
export async function runCell(runner: PyProxy, code: string): Promise<Cell> {
  const proxy = (await runner.run_cell(code)) as PyProxy;
  const result = proxy.toJs({ dict_converter: Object.fromEntries }) as Cell;
  proxy.destroy();
  return result;
}
