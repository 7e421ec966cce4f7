// Kiln's Python package under real Pyodide (Node): the execution contract's pure parts.
import path from "node:path";
import type { PyodideAPI } from "pyodide";
import type { PyProxy } from "pyodide/ffi";
import { beforeAll, describe, expect, it } from "vitest";
import { loadKiln } from "./load-kiln";

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

interface Capture {
  names?: string[];
  removed: string[];
  values: Record<string, Uint8Array>;
  modules: Record<string, string>;
  dropped: string[];
  too_large: string[];
}

function capture(): Capture {
  const proxy = runner.capture_state("", "<cell-x>") as PyProxy;
  const captured = proxy.toJs({ dict_converter: Object.fromEntries }) as Capture;
  proxy.destroy();
  return captured;
}

/** A captured value brought back, shown as Python shows it. */
function decoded(data: Uint8Array): string {
  const state = py.pyimport("kiln.state");
  const value = state.decode(data) as PyProxy | string | number;
  const text = py.globals.get("repr")(value) as string;
  if (typeof value === "object") value.destroy();
  state.destroy();
  return text;
}

async function mustRun(code: string): Promise<Cell> {
  const result = await run(code);
  expect(result.status, JSON.stringify(result.error)).toBe("ok");
  return result;
}

describe("capturing only what a run changed", () => {
  beforeAll(async () => {
    await mustRun(`
items = []
def add(v):
    items.append(v)
first = [1]; second = first
inner = [1]; outer = {"k": inner}
class Box:
    def __init__(self, content): self.content = content
    def put(self, v): self.content.append(v)
shelf = []; box = Box(shelf)
blob = bytes(range(256)) * (50 * 4096)
label = "x" * 100
gone = [0]
counter = 10 ** 20`);
    capture();
  });

  it("sends nothing when a run changes nothing, whatever the session holds", async () => {
    await mustRun("big_bytes = bytes(50 * 2**20); big_array = bytearray(60 * 2**20); many = {i: [i] for i in range(2 * 10**5)}");
    expect(Object.keys(capture().values)).toEqual(expect.arrayContaining(["big_bytes", "big_array", "many"]));
    await mustRun("1 + 1");
    const after = capture();
    expect(Object.keys(after.values)).toEqual([]);
    expect(after.dropped).toEqual([]);
    expect(after.removed).toEqual([]);
    expect(after.names).toBeUndefined(); // the page has the list already
    await mustRun("del big_bytes, big_array, many");
    expect(capture().removed).toEqual(["big_array", "big_bytes", "many"]);
  });

  it("looks only at what a run touched, even among 10^5 variables", async () => {
    await mustRun("globals().update({f'many_{i}': [i] for i in range(10**5)})");
    expect(capture().names?.filter((name) => name.startsWith("many_"))).toHaveLength(100_000);
    await mustRun("many_7.append(8)\nextra = 1");
    const captured = capture();
    expect(Object.keys(captured.values)).toEqual(["extra", "many_7"]);
    expect(captured.names).toBeUndefined();
    await mustRun("for _n in [n for n in globals() if n.startswith('many_')]: del globals()[_n]");
    expect(capture().removed).toHaveLength(100_000);
  }, 60_000);

  it("re-captures a value mutated through a function defined in a cell", async () => {
    await mustRun("add(1)");
    const captured = capture();
    expect(Object.keys(captured.values)).toContain("items");
    expect(decoded(captured.values.items)).toBe("[1]");
    expect(captured.values).not.toHaveProperty("blob");
  });

  it("re-captures a value mutated through an alias, a container or an object", async () => {
    await mustRun("second.append(2)");
    let captured = capture();
    expect(decoded(captured.values.first)).toBe("[1, 2]");
    expect(decoded(captured.values.second)).toBe("[1, 2]");

    await mustRun('outer["k"].append(2)');
    captured = capture();
    expect(decoded(captured.values.inner)).toBe("[1, 2]");
    expect(Object.keys(captured.values)).toContain("outer");

    await mustRun("box.put(3)");
    captured = capture();
    expect(decoded(captured.values.shelf)).toBe("[3]");
  });

  it("re-captures what a run reached without naming it", async () => {
    await mustRun('globals()["items"].append(9)');
    expect(decoded(capture().values.items)).toBe("[1, 9]");
  });

  it("does not pickle an unchanged immutable value again, even when the run reads it", async () => {
    await mustRun("size = len(blob) + len(label)\ncounter = counter + 1");
    const captured = capture();
    expect(Object.keys(captured.values).sort()).toEqual(["counter", "size"]);
    expect(decoded(captured.values.counter)).toBe("100000000000000000001");
    await mustRun('label = label[:-1] + "y"');
    expect(Object.keys(capture().values)).toEqual(["label"]);
  });

  it("forgets a deleted name, and drops a value that no longer pickles", async () => {
    await mustRun("del gone\nlabel = (i for i in range(3))");
    const captured = capture();
    expect(captured.removed).toEqual(["gone"]);
    expect(captured.dropped).toEqual(["label"]);
    expect(Object.keys(captured.values)).toEqual([]);
    await mustRun("del label");
    capture();
  });

  it("keeps a variable bound to None like any immutable value, and rebinds it", async () => {
    await mustRun("nothing = None");
    expect(Object.keys(capture().values)).toEqual(["nothing"]);
    await mustRun("nothing = [1]");
    expect(decoded(capture().values.nothing)).toBe("[1]");
    await mustRun("nothing = None");
    expect(Object.keys(capture().values)).toEqual(["nothing"]);
    await mustRun("del nothing");
    expect(capture().removed).toEqual(["nothing"]);
  });

  it("holds a sys.monitoring tool id while it tracks, and gives it back", async () => {
    const toolOwners = () => py.runPython("import sys\n[sys.monitoring.get_tool(i) for i in range(6)]").toJs() as (string | undefined)[];
    expect(toolOwners()).toContain("kiln-state");
    const state = py.pyimport("kiln.state");
    state.stop_tracking();
    expect(toolOwners()).not.toContain("kiln-state");
    await mustRun("unseen = 1");
    expect(capture().names).toContain("unseen"); // blind: a full capture
    expect(state.start_tracking(runner.namespace())).toBe(true);
    state.destroy();
    expect(toolOwners()).toContain("kiln-state");
    await mustRun("del unseen");
    expect(capture().removed).toEqual(["unseen"]);
  });

  it("captures and restores values far larger than 64 MiB, in and out of containers", async () => {
    await mustRun(`
import hashlib
huge = bytearray(b"kiln") * (20 * 2**20)
boxed = {"data": bytes(70 * 2**20), "n": 1}
digest = hashlib.sha256(huge).hexdigest()`);
    const captured = capture();
    expect(captured.values.huge.length).toBeGreaterThan(80 * 2 ** 20);
    expect(captured.values.boxed.length).toBeGreaterThan(70 * 2 ** 20);
    expect(captured.too_large).toEqual([]);
    // A fresh namespace stands in for the new worker: the values come back from the buffers.
    await mustRun("del huge, boxed");
    const reportProxy = runner.restore_state(
      py.toPy([]),
      py.toPy(["huge", "boxed", "digest", "hashlib"]),
      Object.entries(captured.values),
      py.toPy({ hashlib: "hashlib" }),
      1,
    ) as PyProxy;
    const report = reportProxy.toJs({ dict_converter: Object.fromEntries });
    reportProxy.destroy();
    expect(report.lost).toEqual([]);
    // What was restored counts as captured: it is not sent again.
    await mustRun("after_restore = 1");
    expect(Object.keys(capture().values)).toEqual(["after_restore"]);
    const check = await mustRun("(type(huge).__name__, hashlib.sha256(huge).hexdigest() == digest, len(boxed['data']), boxed['n'])");
    expect(check.value?.["text/plain"]).toBe("('bytearray', True, 73400320, 1)");
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
