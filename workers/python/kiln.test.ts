// Kiln's Python package under real Pyodide (Node): the execution contract's pure parts.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { loadPyodide, type PyodideAPI } from "pyodide";
import type { PyProxy } from "pyodide/ffi";
import { beforeAll, describe, expect, it } from "vitest";

const KILN_DIR = path.join(import.meta.dirname, "kiln");
let py: PyodideAPI;
let runner: PyProxy;
const emitted: { kind: string; payload: unknown }[] = [];
let stdout = "";

interface Cell {
  status: string;
  value?: Record<string, string>;
  error?: { ename: string; evalue: string; traceback: string };
  exit_code?: number;
}

async function run(code: string): Promise<Cell> {
  emitted.length = 0;
  stdout = "";
  const proxy = (await runner.run_cell(code)) as PyProxy;
  const result = proxy.toJs({ dict_converter: Object.fromEntries }) as Cell;
  proxy.destroy();
  return result;
}

beforeAll(async () => {
  py = await loadPyodide();
  py.FS.mkdirTree("/kiln-site/kiln");
  for (const file of readdirSync(KILN_DIR)) {
    py.FS.writeFile(`/kiln-site/kiln/${file}`, readFileSync(path.join(KILN_DIR, file)));
  }
  py.runPython("import sys; sys.path.insert(0, '/kiln-site')");
  py.setStdout({ write: (bytes: Uint8Array) => ((stdout += new TextDecoder().decode(bytes)), bytes.length) });
  runner = py.pyimport("kiln.runner");
  runner.setup((kind: string, payload: string) => emitted.push({ kind, payload: JSON.parse(payload) }));
}, 60_000);

describe("run_cell", () => {
  it("returns the last expression, and nothing after a trailing semicolon", async () => {
    expect((await run("a = 20\na + 22")).value).toEqual({ "text/plain": "42" });
    expect((await run("a + 1;")).value).toBeUndefined();
    expect((await run("b = 5")).value).toBeUndefined();
  });

  it("runs top-level await as __main__ and keeps state between cells", async () => {
    const result = await run("import asyncio\nawait asyncio.sleep(0)\n(__name__, a)");
    expect(result.value?.["text/plain"]).toBe("('__main__', 20)");
  });

  it("trims Pyodide's frames from tracebacks and quotes the cell's lines", async () => {
    const result = await run("def inner():\n    return 1 / 0\ninner()");
    expect(result.status).toBe("error");
    expect(result.error?.ename).toBe("ZeroDivisionError");
    expect(result.error?.traceback).toMatch(/^Traceback \(most recent call last\):\n {2}File "<cell-\d+>", line 3/);
    expect(result.error?.traceback).toContain("return 1 / 0");
    expect(result.error?.traceback).not.toMatch(/_pyodide|pyodide\/|kiln/);
  });

  it("ends a run on sys.exit with its code, and the interpreter lives on", async () => {
    const failed = await run("import sys\nkeep = 'still here'\nsys.exit(3)");
    expect(failed).toMatchObject({ status: "error", exit_code: 3, error: { ename: "SystemExit" } });
    expect(await run("sys.exit(0)")).toMatchObject({ status: "ok", exit_code: 0 });
    expect((await run("keep")).value?.["text/plain"]).toBe("'still here'");
  });

  it("reports KeyboardInterrupt as interrupted", async () => {
    expect((await run("raise KeyboardInterrupt")).status).toBe("interrupted");
  });
});

describe("rich output", () => {
  it("collects every _repr_*_ method into a mime bundle", async () => {
    const result = await run(`
class Rich:
    def _repr_png_(self): return b"\\x89PNG"
    def _repr_svg_(self): return "<svg/>"
    def _repr_html_(self): return "<b>bold</b>"
    def _repr_markdown_(self): return "# Title"
    def _repr_json_(self): return {"a": [1, 2]}
    def __repr__(self): return "Rich()"
Rich()`);
    expect(result.value).toEqual({
      "image/png": Buffer.from("\x89PNG", "latin1").toString("base64"),
      "image/svg+xml": "<svg/>",
      "text/html": "<b>bold</b>",
      "text/markdown": "# Title",
      "application/json": '{"a": [1, 2]}',
      "text/plain": "Rich()",
    });
  });

  it("display() publishes each object in order, after text printed before it", async () => {
    await run("print('before')\ndisplay(1, {'k': 'v'})");
    expect(stdout).toBe("before\n");
    expect(emitted).toEqual([
      { kind: "display", payload: { "text/plain": "1" } },
      { kind: "display", payload: { "text/plain": "{'k': 'v'}" } },
    ]);
  });

  it("a broken _repr_ method does not break the run", async () => {
    const result = await run("class Bad:\n    def _repr_svg_(self): raise ValueError()\n    def __repr__(self): return 'Bad'\nBad()");
    expect(result).toMatchObject({ status: "ok", value: { "text/plain": "Bad" } });
  });

  it("shows every open matplotlib figure as PNG at the end of a run", async () => {
    // matplotlib cannot be downloaded here: a stand-in pyplot with the same interface.
    const result = await run(`
import sys, types
class Figure:
    def __init__(self, num): self.num = num
    def savefig(self, buffer, format, bbox_inches):
        buffer.write(b"png-of-figure-%d" % self.num)
    def __repr__(self): return f"<Figure {self.num}>"
plt = types.ModuleType("matplotlib.pyplot")
plt._figs = {1: Figure(1), 2: Figure(2)}
plt.get_fignums = lambda: sorted(plt._figs)
plt.figure = lambda num: plt._figs[num]
plt.close = lambda which: plt._figs.clear()
sys.modules["matplotlib.pyplot"] = plt
"drawn"`);
    expect(result.status).toBe("ok");
    expect(emitted.map((e) => e.payload)).toEqual([
      { "image/png": btoa("png-of-figure-1"), "text/plain": "<Figure 1>" },
      { "image/png": btoa("png-of-figure-2"), "text/plain": "<Figure 2>" },
    ]);
    await run("pass");
    expect(emitted).toEqual([]); // closed figures are not shown twice
    await run("del sys.modules['matplotlib.pyplot']");
  });
});

describe("classify_imports", () => {
  const lock = () => py.toPy({ numpy: "numpy", sqlite3: "sqlite3", yaml: "pyyaml" });
  const classify = (code: string) => {
    const proxy = runner.classify_imports(code, lock()) as PyProxy;
    const plan = proxy.toJs({ dict_converter: Object.fromEntries });
    proxy.destroy();
    return plan;
  };

  it("needs nothing for the standard library", () => {
    expect(classify("import json, os.path\nfrom collections import Counter")).toEqual({ load: [], missing: [] });
  });

  it("loads lock file packages by their package name", () => {
    expect(classify("import numpy as np\nimport yaml")).toEqual({ load: ["numpy", "pyyaml"], missing: [] });
  });

  it("names modules that exist nowhere, except optional imports", () => {
    const code = "import torch\ntry:\n    import fancy_optional\nexcept ImportError:\n    pass\nfrom tensorflow import keras";
    expect(classify(code)).toEqual({ load: [], missing: ["tensorflow", "torch"].sort() });
  });

  it("leaves a syntax error to the run itself", () => {
    expect(classify("import (")).toEqual({ load: [], missing: [] });
  });
});

describe("state capture and restore", () => {
  it("carries values, definitions and modules to a fresh namespace, and names what is lost", async () => {
    await run(`
import json as j
from math import sqrt
class Point:
    def __init__(self, x, y): self.x, self.y = x, y
    def norm(self): return sqrt(self.x ** 2 + self.y ** 2)
def double(v): return 2 * v
numbers = [1, 2, 3]; label = "tri"; table = {"a": (1, 2)}; seen = {1, 2}
p = Point(3, 4)
gen = (i for i in range(3))
square = lambda v: v * v`);
    const capturedProxy = runner.capture_state("", "<cell-x>") as PyProxy;
    const captured = capturedProxy.toJs({ dict_converter: Object.fromEntries }) as {
      names: string[];
      values: Record<string, Uint8Array>;
      modules: Record<string, string>;
    };
    capturedProxy.destroy();
    expect(captured.modules).toMatchObject({ j: "json" });
    expect(Object.keys(captured.values)).not.toContain("gen");
    expect(captured.values.numbers).toBeInstanceOf(Uint8Array);

    // The new worker's namespace is empty: stand in for it by deleting every captured name.
    const source = `import json as j
from math import sqrt
class Point:
    def __init__(self, x, y): self.x, self.y = x, y
    def norm(self): return sqrt(self.x ** 2 + self.y ** 2)
def double(v): return 2 * v
numbers = "not replayed"`;
    await run(`for _name in [n for n in list(globals()) if n in ${JSON.stringify(captured.names)}]:\n    del globals()[_name]`);
    const reportProxy = runner.restore_state(
      py.toPy([["<cell-restored>", source]]),
      py.toPy(captured.names),
      py.toPy(captured.values),
      py.toPy(captured.modules),
      7,
    ) as PyProxy;
    const report = reportProxy.toJs({ dict_converter: Object.fromEntries });
    reportProxy.destroy();
    // (Names from earlier tests whose classes were not replayed are lost as well.)
    const carried = ["Point", "double", "j", "numbers", "label", "p", "sqrt", "table", "seen"];
    expect(report.lost).toEqual(expect.arrayContaining(["gen", "square"]));
    expect(report.kept).toEqual(expect.arrayContaining(carried));
    for (const name of carried) expect(report.lost).not.toContain(name);
    const check = await run("(numbers, label, table, seen, p.norm(), double(4), j.dumps(1), type(p) is Point)");
    expect(check.value?.["text/plain"]).toBe("([1, 2, 3], 'tri', {'a': (1, 2)}, {1, 2}, 5.0, 8, '1', True)");
  });
});

describe("input()", () => {
  it("says why it cannot ask, when the worker gives a reason", async () => {
    runner.setup(
      (kind: string, payload: string) => emitted.push({ kind, payload: JSON.parse(payload) }),
      undefined,
      () => undefined,
      "input() is not available on this page: no shared memory.",
    );
    const result = await run("input('name? ')");
    expect(result.error).toMatchObject({ ename: "EOFError", evalue: "input() is not available on this page: no shared memory." });
    runner.setup((kind: string, payload: string) => emitted.push({ kind, payload: JSON.parse(payload) }), undefined, () => undefined);
    expect((await run("input('name? ')")).error?.evalue).toContain("nobody can answer");
  });
});
