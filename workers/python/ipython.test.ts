// IPython's display API and magics under real Pyodide (Node), as Kiln provides them with no download.
import type { PyodideAPI } from "pyodide";
import type { PyProxy } from "pyodide/ffi";
import { beforeAll, describe, expect, it } from "vitest";
import { loadKiln, runCell, type Cell } from "./load-kiln";

let py: PyodideAPI;
let runner: PyProxy;
const emitted: { kind: string; payload: Record<string, unknown> }[] = [];
let stdout = "";
let stderr = "";

function run(code: string): Promise<Cell> {
  emitted.length = 0;
  stdout = "";
  stderr = "";
  return runCell(runner, code);
}

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
/** The bundles shown, in order. */
const shown = () => emitted.filter((e) => e.kind === "display").map((e) => e.payload as Record<string, string>);

beforeAll(async () => {
  ({ py, runner } = await loadKiln());
  py.setStdout({ write: (bytes: Uint8Array) => ((stdout += decode(bytes)), bytes.length) });
  py.setStderr({ write: (bytes: Uint8Array) => ((stderr += decode(bytes)), bytes.length) });
  runner.setup((kind: string, payload: string) => emitted.push({ kind, payload: JSON.parse(payload) }));
  py.FS.mkdirTree("/home/pyodide/work");
  py.runPython("import os; os.chdir('/home/pyodide/work')");
}, 60_000);

describe("IPython.display", () => {
  it("imports with no ipython package, and the import needs nothing loaded", async () => {
    const result = await run("import IPython\nfrom IPython.display import display, HTML\nfrom IPython.core.display import Markdown\n(IPython.__version__, IPython.display.HTML is HTML)");
    expect(result).toMatchObject({ status: "ok", value: { "text/plain": "('9.0.0+kiln', True)" } });
    const lock = py.toPy({ IPython: "ipython" });
    const plan = (runner.classify_imports("import IPython\nfrom IPython.display import Latex", lock) as PyProxy).toJs({ dict_converter: Object.fromEntries });
    expect(plan).toEqual({ load: [], missing: [] });
  });

  it("each class shows its representation", async () => {
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    await run(`
from IPython.display import *
import base64
display(HTML("<b>hi</b>"), Markdown("# T"), Latex(r"$\\alpha$"), Math(r"x^2"), JSON({"a": [1, 2]}), SVG("<svg xmlns='http://www.w3.org/2000/svg'/>"))
display(Image(data=base64.b64decode("${png}")), Image(url="https://example.com/cat.png"), Pretty("plain"), Javascript("window.x = 1"), Code("print(1)", language="python"))
with open("dot.jpg", "wb") as f: f.write(b"\\xff\\xd8\\xff\\xe0 jpeg")
display(Image(filename="dot.jpg"))`);
    const bundles = shown();
    expect(bundles[0]).toMatchObject({ "text/html": "<b>hi</b>", "text/plain": expect.stringMatching(/^<IPython\.core\.display\.HTML object/) });
    expect(bundles[1]["text/markdown"]).toBe("# T");
    expect(bundles[2]["text/latex"]).toBe("$\\alpha$");
    expect(bundles[3]["text/latex"]).toBe("$\\displaystyle x^2$");
    expect(JSON.parse(bundles[4]["application/json"])).toEqual({ a: [1, 2] });
    expect(bundles[5]["image/svg+xml"]).toBe("<svg xmlns='http://www.w3.org/2000/svg'/>");
    expect(bundles[6]["image/png"]).toBe(png);
    expect(bundles[7]).toEqual({ "text/plain": "<Image: https://example.com/cat.png (not fetched: Kiln does not download display data from a URL)>" });
    expect(bundles[8]).toEqual({ "text/plain": "plain" });
    expect(bundles[9]).toEqual({ "application/javascript": "window.x = 1", "text/plain": "JavaScript output is not run in Kiln:\nwindow.x = 1" });
    expect(bundles[10]["text/markdown"]).toBe("```python\nprint(1)\n```");
    expect(bundles[11]["image/jpeg"]).toBe(Buffer.from("\xff\xd8\xff\xe0 jpeg", "latin1").toString("base64"));
  });

  it("display_id=True returns a handle whose update replaces the display", async () => {
    const result = await run(`
from IPython.display import display, update_display
h = display("first", display_id=True)
h.update("second")
update_display("third", display_id=h.display_id)
display("named", display_id="mine")
h`);
    const id = emitted[0].payload.id as string;
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(emitted).toEqual([
      { kind: "display_id", payload: { id, data: { "text/plain": "'first'" }, update: false } },
      { kind: "display_id", payload: { id, data: { "text/plain": "'second'" }, update: true } },
      { kind: "display_id", payload: { id, data: { "text/plain": "'third'" }, update: true } },
      { kind: "display_id", payload: { id: "mine", data: { "text/plain": "'named'" }, update: false } },
    ]);
    expect(result.value?.["text/plain"]).toBe(`<DisplayHandle display_id=${id}>`);
  });

  it("clear_output(wait) and display(clear=True) ask for a clear, after the text before them", async () => {
    await run("from IPython.display import clear_output\nprint('a')\nclear_output()\nclear_output(wait=True)\ndisplay(1, clear=True)");
    expect(stdout).toBe("a\n");
    expect(emitted).toEqual([
      { kind: "clear", payload: { wait: false } },
      { kind: "clear", payload: { wait: true } },
      { kind: "clear", payload: { wait: true } },
      { kind: "display", payload: { "text/plain": "1" } },
    ]);
  });

  it("ProgressBar shows itself once and updates in place", async () => {
    await run("from IPython.display import ProgressBar\nfor _ in ProgressBar(3): pass");
    expect(emitted.map((e) => e.payload.update)).toEqual([false, true, true, true, true]);
    const last = emitted[4].payload.data as Record<string, string>;
    expect(last["text/html"]).toBe("<progress style='width:60ex' max='3' value='3'></progress>");
  });

  it("get_ipython() gives a shell with user_ns and magics", async () => {
    const result = await run("ip = get_ipython()\nip.user_ns['zz'] = 5\n(ip.run_line_magic('pwd', ''), zz, IPython.get_ipython() is ip)");
    expect(result.value?.["text/plain"]).toBe("('/home/pyodide/work', 5, True)");
    await run("get_ipython().system('ls')");
    expect(stdout).toBe("!ls: there is no shell in the browser: Kiln runs Python only (use os, shutil and pathlib instead).\n");
  });

  it("the real IPython's display shows in Kiln when its module loads", async () => {
    // A stand-in of the real package, whose display prints as it does without a kernel.
    py.FS.mkdirTree("/fake-ipython/IPython/core");
    py.FS.writeFile("/fake-ipython/IPython/__init__.py", "REAL = True\n");
    py.FS.writeFile("/fake-ipython/IPython/core/__init__.py", "");
    py.FS.writeFile("/fake-ipython/IPython/core/display_functions.py", "def display(*objs, **kw):\n    print('no kernel:', *objs)\n");
    py.FS.writeFile("/fake-ipython/IPython/display.py", "from IPython.core.display_functions import *\nfrom IPython.core.display_functions import display\n");
    const result = await run(`
import sys
sys.path.insert(0, "/fake-ipython")
from kiln.shell import forget_shim_modules
forget_shim_modules()
import IPython.display
IPython.display.display({"k": 1})
IPython.REAL`);
    expect(result.value?.["text/plain"]).toBe("True");
    expect(stdout).toBe("");
    expect(shown()).toEqual([{ "text/plain": "{'k': 1}" }]);
    await run("sys.path.remove('/fake-ipython')\nforget_shim_modules()\nfor n in [n for n in sys.modules if n.startswith('IPython')]: del sys.modules[n]\nimport IPython");
    expect((await run("hasattr(IPython, 'REAL')")).value?.["text/plain"]).toBe("False");
  });
});

describe("magics", () => {
  it("%cd, %pwd, x = %pwd, %ls", async () => {
    const result = await run("import os\nos.makedirs('sub/inner', exist_ok=True)\nopen('sub/f.txt', 'w').close()\n%cd sub\nhere = %pwd\n%ls\n%cd -\nhere");
    expect(result).toMatchObject({ status: "ok", value: { "text/plain": "'/home/pyodide/work/sub'" } });
    expect(stdout).toBe("/home/pyodide/work/sub\nf.txt\ninner/\n/home/pyodide/work\n");
  });

  it("%env lists, reads and sets", async () => {
    const result = await run("%env KILN_X=42\nv = %env KILN_X\nall_ = %env\n(v, all_['KILN_X'])");
    expect(stdout).toBe("env: KILN_X=42\n");
    expect(result.value?.["text/plain"]).toBe("('42', '42')");
  });

  it("%who, %whos and %reset -f, which the state capture sees", async () => {
    await run("%reset -f");
    await run("alpha = 1\nbeta = 'two'");
    await run("%who");
    expect(stdout).toBe("alpha\tbeta\n");
    await run("%whos");
    expect(stdout).toMatch(/^Variable +Type +Data\/Info\n-+\nalpha +int +1\nbeta +str +'two'\n$/);
    runner.capture_state("pass", "<cell-x>").destroy();
    const reset = await run("%reset -f");
    expect(reset.status).toBe("ok");
    const capture = (runner.capture_state("%reset -f", "<cell-y>") as PyProxy).toJs({ dict_converter: Object.fromEntries });
    expect(capture.removed).toEqual(expect.arrayContaining(["alpha", "beta"]));
    await run("%who");
    expect(stdout).toBe("Interactive namespace is empty.\n");
    expect((await run("get_ipython is not None and display is not None")).value?.["text/plain"]).toBe("True");
  });

  it("%time and %%time run in the session and give the value", async () => {
    const line = await run("%time t = sum(range(10))\nt");
    expect(line.value?.["text/plain"]).toBe("45");
    expect(stdout).toMatch(/^CPU times: total: .+\nWall time: .+\n$/);
    const cell = await run("%%time\nu = 2\nu * 21");
    expect(cell.value?.["text/plain"]).toBe("42");
    expect(stdout).toMatch(/Wall time: \d/);
  });

  it("%timeit with -n 3 -r 1, and choosing its own loops", async () => {
    await run("%timeit -n 3 -r 1 sum(range(100))");
    expect(stdout).toMatch(/^\d[\d.]* (ns|µs|ms) ± 0 ns per loop \(mean ± std\. dev\. of 1 run, 3 loops each\)\n$/);
    const result = await run("r = %timeit -o -q -r 2 x = 1\n(r.loops >= 1000, r.repeat)");
    expect(result.value?.["text/plain"]).toBe("(True, 2)");
    await run("%%timeit -n 2 -r 2\ny = [i for i in range(10)]");
    expect(stdout).toMatch(/of 2 runs, 2 loops each\)\n$/);
  });

  it("%%writefile writes (and -a appends) in the working directory", async () => {
    await run("%%writefile notes.txt\nline one");
    expect(stdout).toBe("Writing notes.txt\n");
    await run("%%writefile -a notes.txt\nline two\n");
    expect(stdout).toBe("Appending to notes.txt\n");
    expect((await run("open('/home/pyodide/work/notes.txt').read()")).value?.["text/plain"]).toBe("'line one\\nline two\\n'");
  });

  it("%history shows this session's cells in order", async () => {
    await run("h1 = 1");
    await run("h2 = 2");
    await run("%history");
    expect(stdout).toMatch(/h1 = 1\nh2 = 2\n%history\n$/);
  });

  it("obj? shows signature and docstring, obj?? the source", async () => {
    await run('def area(w, h=2):\n    """The area."""\n    return w * h');
    await run("area?");
    expect(stdout).toMatch(/^Signature: area\(w, h=2\)\nDocstring:\nThe area\.\n/);
    await run("?area");
    expect(stdout).toContain("Signature: area(w, h=2)");
    await run("area??");
    expect(stdout).toContain('Source:\ndef area(w, h=2):\n    """The area."""\n    return w * h\n');
    await run("nothing_here?");
    expect(stdout).toBe("Object `nothing_here` not found.\n");
  });

  it("!cmd says there is no shell; x = !cmd gives an empty list", async () => {
    const result = await run("!ls -la\nfiles = !ls\nfiles");
    expect(stdout).toBe(
      "!ls -la: there is no shell in the browser: Kiln runs Python only (use os, shutil and pathlib instead).\n" +
        "!ls: there is no shell in the browser: Kiln runs Python only (use os, shutil and pathlib instead).\n",
    );
    expect(result.value?.["text/plain"]).toBe("[]");
  });

  it("%pip install asks the lock file first, and says in one line what it could not install", async () => {
    const lock = py.toPy({ numpy: "numpy", yaml: "pyyaml" });
    const plan = (runner.classify_imports("%pip install PyYAML==6.0 -q\n!pip install numpy other", lock) as PyProxy).toJs({ dict_converter: Object.fromEntries });
    expect(plan).toEqual({ load: ["pyyaml", "numpy"], missing: [] });
    const result = await run("%pip install kiln-no-such-package\n'after'");
    expect(result.value?.["text/plain"]).toBe("'after'");
    expect(stderr).toMatch(/^%pip install: could not install kiln-no-such-package \(.+\)\.\n$/);
    expect((await run("%pip list")).error).toMatchObject({ ename: "UsageError", traceback: "UsageError: %pip list: Kiln knows only `%pip install package…`." });
  });

  it("an unknown magic is a UsageError naming it", async () => {
    const result = await run("x = 1\n%nosuchmagic foo");
    expect(result.error).toEqual({
      ename: "UsageError",
      evalue: "Line magic function `%nosuchmagic` not found.",
      traceback: "UsageError: Line magic function `%nosuchmagic` not found.",
    });
    expect((await run("%%nosuchcell\nbody")).error?.evalue).toBe("Cell magic `%%nosuchcell` not found.");
  });

  it("tracebacks keep the cell's line numbers after magic lines, and inside %%time", async () => {
    const result = await run("%pwd\nx = 1\n\n1 / 0");
    expect(result.error?.traceback).toMatch(/File "<cell-\d+>", line 4, in <module>\n {4}1 \/ 0/);
    const timed = await run("%%time\na = 1\nb = undefined_name");
    expect(timed.error?.traceback).toMatch(/File "<cell-\d+>", line 3, in <module>\n {4}b = undefined_name/);
    expect(timed.error?.traceback).not.toMatch(/kiln/);
  });

  it("leaves valid Python alone, even with ? and % and ! in it", async () => {
    const result = await run("s = '%d?' % 3\nt = 1 != 2\n(s, t)");
    expect(result.value?.["text/plain"]).toBe("('3?', True)");
  });
});
