// Kiln's Python package under real Pyodide (Node): capturing a session's state after a run, and
// restoring it in a fresh interpreter (kiln/state.py, kiln/tracker.py, kiln/values.py).
import type { PyodideAPI } from "pyodide";
import type { PyProxy } from "pyodide/ffi";
import { beforeAll, describe, expect, it } from "vitest";
import { loadKiln, runCell, type Cell } from "./load-kiln";

let py: PyodideAPI;
let runner: PyProxy;
const run = (code: string) => runCell(runner, code);

beforeAll(async () => {
  ({ py, runner } = await loadKiln());
  runner.setup(() => undefined);
}, 60_000);

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
  const values = py.pyimport("kiln.values");
  const value = values.decode(data) as PyProxy | string | number;
  const text = py.globals.get("repr")(value) as string;
  if (typeof value === "object") value.destroy();
  values.destroy();
  return text;
}

async function mustRun(code: string): Promise<Cell> {
  const result = await run(code);
  expect(result.status, JSON.stringify(result.error)).toBe("ok");
  return result;
}

describe("a definition whose replay is interrupted", () => {
  const without = (source: string, spans: [number, number][]) => {
    const state = py.pyimport("kiln.state");
    try {
      return state._without_lines(source, py.toPy(spans)) as string;
    } finally {
      state.destroy();
    }
  };

  it("is blanked line for line, as Python numbers lines, keeping the cell's other lines where they were", () => {
    // U+2028 ends a line for str.splitlines, not for Python.
    const cell = 's = "a\u2028b"\n@decorated\nclass Looping:\n    while True: pass\ndef kept(): return 1\n';
    expect(without(cell, [[2, 4]])).toBe('s = "a\u2028b"\n\n\n\ndef kept(): return 1\n');
    expect(without("class A:\r\n    pass\r\nx = 1", [[1, 2]])).toBe("\n\nx = 1");
  });

  it("blanks the whole cell when what is left would not parse (a line shared with another statement)", () => {
    expect(without('x = """a\n"""; class A: pass\ndef f(): return 1\n', [[2, 2]])).toBe("\n\n\n");
  });
});

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
    const tracker = py.pyimport("kiln.tracker");
    tracker.stop_tracking();
    expect(toolOwners()).not.toContain("kiln-state");
    await mustRun("unseen = 1");
    expect(capture().names).toContain("unseen"); // blind: a full capture
    expect(tracker.start_tracking(runner.namespace())).toBe(true);
    tracker.destroy();
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
