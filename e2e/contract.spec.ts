import { expect, test } from "./support/test";
import { openPlayground, output, run, startRun } from "./support/playground";

test("prints, returns the last value, and honours a trailing semicolon", async ({ playground: page }) => {
  await run(page, 'print("hi")\n6 * 7');
  await expect(output(page)).toHaveText("hi\n42");
  await run(page, "6 * 7;");
  await expect(output(page)).toHaveText("");
});

test("top-level await works and the cell runs as __main__", async ({ playground: page }) => {
  await run(page, 'import asyncio\nawait asyncio.sleep(0.05)\nprint(__name__)');
  await expect(output(page)).toHaveText("__main__");
});

test("variables persist between runs", async ({ playground: page }) => {
  await run(page, "counter = 41");
  await run(page, "counter += 1\ncounter");
  await expect(output(page)).toHaveText("42");
});

test("stdout and stderr stream while the code runs, in order, partial lines too", async ({ playground: page }) => {
  const finished = await startRun(
    page,
    'import sys, time\nprint("working", end="")\nprint("warn", file=sys.stderr)\ntime.sleep(4)\nprint(" done")',
  );
  const out = output(page);
  // Seen while Python still sleeps (the run is not over): the partial line, then stderr.
  await expect(out).toHaveText("workingwarn\n", { timeout: 3500 });
  await expect(out).toHaveAttribute("aria-busy", "true");
  await finished();
  await expect(out).toHaveText("workingwarn\n done");
  await expect(out.locator(".stderr")).toHaveText("warn\n");
});

test("an exception shows a traceback without Pyodide's internal frames", async ({ playground: page }) => {
  await run(page, "def divide(a, b):\n    return a / b\n\ndivide(1, 0)");
  const error = output(page).getByRole("alert");
  await expect(error).toContainText("Traceback (most recent call last)");
  await expect(error).toContainText('File "<cell-');
  await expect(error).toContainText("return a / b");
  await expect(error).toContainText("ZeroDivisionError: division by zero");
  await expect(error).not.toContainText("_pyodide");
  await expect(error).not.toContainText("/lib/python");
});

test("the standard library loads from the bytecode Kiln ships, and its sources are still there", async ({ playground: page }) => {
  // Pyodide's own archive has sources only: pickle would be compiled at import, its bytecode under __pycache__.
  await run(page, "import inspect, json, pickle\nprint(pickle.__spec__.cached)\nprint(inspect.getsource(json.dumps).splitlines()[0])");
  await expect(output(page)).toHaveText(/^\/lib\/python\d+\.zip\/pickle\.pyc\ndef dumps\(obj, \*, skipkeys=False/);
});

test("sys.exit ends the run with its code and the interpreter lives on", async ({ playground: page }) => {
  await run(page, 'import sys\nkept = "yes"\nprint("before")\nsys.exit(3)\nprint("after")');
  await expect(output(page)).toContainText("before");
  await expect(output(page)).not.toContainText("after");
  await expect(output(page)).toContainText("Exited with code 3");
  await run(page, "kept");
  await expect(output(page)).toHaveText("'yes'");
});

test("rich output: display() and every _repr_*_ method", async ({ playground: page }) => {
  const png =
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==";
  await run(
    page,
    `import base64
class Png:
    def _repr_png_(self): return base64.b64decode("${png}")
    def __repr__(self): return "a tiny PNG"
class Svg:
    def _repr_svg_(self): return '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20"><rect width="20" height="20" fill="red"/></svg>'
    def __repr__(self): return "a red square"
class Html:
    def _repr_html_(self): return "<table><tr><td id='cell'>html cell</td></tr></table>"
class Md:
    def _repr_markdown_(self): return "## Markdown heading"
class Js:
    def _repr_json_(self): return {"answer": 42}
display(Png(), Svg(), Html(), Md())
Js()`,
  );
  const out = output(page);
  const image = out.getByRole("img", { name: "a tiny PNG" });
  await expect(image).toBeVisible();
  expect(await image.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(2);
  const svg = out.getByRole("img", { name: "a red square" });
  await expect(svg).toBeVisible();
  expect(await svg.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(20);
  const frame = out.locator("iframe[title='HTML output']");
  await expect(frame).toHaveAttribute("sandbox", "allow-scripts");
  await expect(page.frameLocator("iframe[title='HTML output']").locator("#cell")).toHaveText("html cell");
  await expect(out.getByRole("heading", { name: "Markdown heading" })).toBeVisible();
  // JSON as a tree that folds: the object, and its one key with its value.
  await expect(out.locator(".json-tree summary")).toHaveText("{…} 1 key");
  await expect(out.locator(".json-tree .json-value")).toHaveText("answer: 42");
});

test("HTML output is shown without running its scripts or loading anything remote", async ({ playground: page }) => {
  await run(
    page,
    `class Probe:
    def _repr_html_(self):
        return """<p id="r">static</p><img id="i" src="https://remote.example/pixel.png"><script>
document.getElementById("r").textContent = "script ran: " + String(parent.document.title);
</script>"""
Probe()`,
  );
  const frame = page.frameLocator("iframe[title='HTML output']");
  await expect(frame.locator("#r")).toHaveText("static");
  // The frame's policy runs no script of Python's and fetches nothing remote.
  await expect(frame.locator("script", { hasText: "script ran" })).toHaveCount(0);
  expect(await frame.locator("#i").evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth)).toBeFalsy();
});

test("matplotlib figures are captured as PNG at the end of the run (stand-in pyplot)", async ({ playground: page }) => {
  // matplotlib cannot be downloaded here; a stand-in with pyplot's interface draws a real PNG.
  await run(
    page,
    `import sys, types, base64
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==")
class Figure:
    def savefig(self, buffer, format, bbox_inches): buffer.write(PNG)
    def __repr__(self): return "<Figure size 2x2>"
plt = types.ModuleType("matplotlib.pyplot")
plt.figs = {1: Figure()}
plt.get_fignums = lambda: list(plt.figs)
plt.figure = lambda n: plt.figs[n]
plt.close = lambda what: plt.figs.clear()
sys.modules["matplotlib.pyplot"] = plt
print("plotted")`,
  );
  await expect(output(page).getByRole("img", { name: "<Figure size 2x2>" })).toBeVisible();
  await run(page, "import sys; del sys.modules['matplotlib.pyplot']\nlen(plt.figs)");
  await expect(output(page)).toHaveText("0");
});

test("a flood of output is capped with a visible notice and the page stays usable", async ({ playground: page }) => {
  await run(page, "for i in range(300_000):\n    print(i)");
  const out = output(page);
  await expect(out.getByText(/Output truncated: this run printed more than 1 MiB/)).toBeVisible();
  await expect(out).toContainText("\n0\n1\n2\n".slice(1));
  await run(page, "'still responsive'");
  await expect(out).toHaveText("'still responsive'");
});

test("20 000 small displays show the first 1000 with a notice, and the page stays usable", async ({ playground: page }) => {
  await run(page, "for i in range(20_000):\n    display(i)");
  const out = output(page);
  await expect(out.getByText("Output truncated: this run showed more than 1000 outputs; the rest is not shown.")).toBeVisible();
  // The first thousand, 0 to 999, and then the notice: none after it.
  await expect(out).toHaveText(/^0123456789101112.*997998999Output truncated: this run showed more than 1000 outputs; the rest is not shown\.$/);
  await run(page, "'still responsive'");
  await expect(out).toHaveText("'still responsive'");
});

test("Markdown nested too deeply to render is shown as its text, and the page stays", async ({ playground: page }) => {
  await run(page, 'class Deep:\n    def _repr_markdown_(self): return ">" * 6000 + " the end"\nDeep()');
  const out = output(page);
  await expect(out).toContainText(">>>>>>>> the end");
  await expect(out.locator("blockquote")).toHaveCount(0);
  await run(page, "'still here'");
  await expect(out).toHaveText("'still here'");
});

test("input() asks in the page and returns what the person typed", async ({ playground: page }) => {
  const finished = await startRun(page, 'name = input("Your name? ")\nprint(f"Hello, {name}!")');
  const field = page.getByRole("textbox", { name: "Python input" });
  await expect(output(page)).toContainText("Your name?");
  await field.fill("Ada Lovelace");
  await field.press("Enter");
  await finished();
  await expect(output(page)).toContainText("Hello, Ada Lovelace!");
});

test("Ctrl+Enter runs; Stop interrupts a busy loop and variables survive", async ({ playground: page }) => {
  await run(page, "survivor = 'here'");
  await page.getByRole("textbox", { name: "Python code" }).fill("while True:\n    pass");
  await page.getByRole("textbox", { name: "Python code" }).press("Control+Enter");
  // The status line counts the time while the run goes on.
  await expect(page.getByRole("status")).toContainText(/Running… \d+(\.\d)? s/);
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(output(page)).toContainText("Interrupted after");
  await run(page, "survivor");
  await expect(output(page)).toHaveText("'here'");
});

test("Restart gives a fresh interpreter", async ({ page }) => {
  await openPlayground(page);
  await run(page, "old = 1");
  await page.getByRole("button", { name: "Restart" }).click();
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await run(page, "'old' in globals()");
  await expect(output(page)).toHaveText("False");
});
