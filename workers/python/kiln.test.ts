// Kiln's Python package under real Pyodide (Node): the execution contract's pure parts.
import path from "node:path";
import type { PyodideAPI } from "pyodide";
import type { PyProxy } from "pyodide/ffi";
import { beforeAll, describe, expect, it } from "vitest";
import { loadKiln, runCell, type Cell } from "./load-kiln";

let py: PyodideAPI;
let runner: PyProxy;
const emitted: { kind: string; payload: unknown }[] = [];
let stdout = "";

function run(code: string): Promise<Cell> {
  emitted.length = 0;
  stdout = "";
  return runCell(runner, code);
}

beforeAll(async () => {
  ({ py, runner } = await loadKiln());
  py.setStdout({ write: (bytes: Uint8Array) => ((stdout += new TextDecoder().decode(bytes)), bytes.length) });
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

  it("matplotlib through Kiln's backend: show() and the end of a run publish each open figure as a real PNG", async () => {
    // matplotlib cannot be downloaded here. A minimal stand-in package with matplotlib's backend
    // interface: pyplot loads the backend module named by MPLBACKEND (as matplotlib does for
    // "module://…"), draws through its FigureCanvas, and calls its show().
    writeStandInMatplotlib(py);
    const shown = await run(`
import os
os.environ["MPLBACKEND"] = "module://kiln.mpl_backend"
import matplotlib.pyplot as plt
plt.figure(width=3, height=2)
plt.show()
len(plt.get_fignums())`);
    // show() published and closed the figure during the run, not the end of the run.
    expect(shown).toMatchObject({ status: "ok", value: { "text/plain": "0" } });
    expect(emitted).toHaveLength(1);
    const png = emitted[0].payload as Record<string, string>;
    expect(png["text/plain"]).toBe("<Figure size 3x2 with 0 Axes>");
    const bytes = Uint8Array.from(atob(png["image/png"]), (c) => c.charCodeAt(0));
    // A real PNG of the figure's size: signature, then IHDR with width and height.
    expect([...bytes.slice(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const view = new DataView(bytes.buffer);
    expect([view.getUint32(16), view.getUint32(20)]).toEqual([3, 2]);

    // Figures left open when a run ends are shown too, once.
    await run("plt.figure(width=1, height=1)\nplt.figure(width=2, height=2)\nNone");
    expect(emitted.map((e) => (e.payload as Record<string, string>)["text/plain"])).toEqual([
      "<Figure size 1x1 with 0 Axes>",
      "<Figure size 2x2 with 0 Axes>",
    ]);
    await run("pass");
    expect(emitted).toEqual([]);
    await run("import sys\nfor name in [m for m in sys.modules if m.startswith('matplotlib')]: del sys.modules[name]");
  });
});

/** The stand-in matplotlib: pyplot, a Figure, and backend_agg's FigureCanvasAgg writing real PNGs. */
function writeStandInMatplotlib(pyodide: PyodideAPI): void {
  const files: Record<string, string> = {
    "matplotlib/__init__.py": "__version__ = '0.0-stand-in'\n",
    "matplotlib/backends/__init__.py": "",
    "matplotlib/backends/backend_agg.py": `import struct, zlib

class FigureCanvasAgg:
    def __init__(self, figure):
        self.figure = figure
        figure.canvas = self

    def print_png(self, buffer):
        width, height = self.figure.width, self.figure.height
        rows = b"".join(b"\\x00" + b"\\xff\\xff\\xff" * width for _ in range(height))
        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        buffer.write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
`,
    "matplotlib/pyplot.py": `import importlib, os

_name = os.environ.get("MPLBACKEND", "")
if not _name.startswith("module://"):
    raise ImportError("this stand-in only loads module:// backends")
_backend = importlib.import_module(_name[len("module://"):])
_figures = {}

class Figure:
    def __init__(self, num, width, height):
        self.number, self.width, self.height = num, width, height
        _backend.FigureCanvas(self)

    def savefig(self, buffer, format="png", bbox_inches=None):
        if format != "png":
            raise ValueError(format)
        self.canvas.print_png(buffer)

    def __repr__(self):
        return f"<Figure size {self.width}x{self.height} with 0 Axes>"

def figure(num=None, width=4, height=3):
    if num in _figures:
        return _figures[num]
    num = max(_figures, default=0) + 1 if num is None else num
    _figures[num] = Figure(num, width, height)
    return _figures[num]

def get_fignums():
    return sorted(_figures)

def close(which="all"):
    _figures.clear()

def show(*args, **kwargs):
    return _backend.show(*args, **kwargs)
`,
  };
  for (const [file, source] of Object.entries(files)) {
    pyodide.FS.mkdirTree(path.posix.dirname(`/kiln-site/${file}`));
    pyodide.FS.writeFile(`/kiln-site/${file}`, source);
  }
}

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
