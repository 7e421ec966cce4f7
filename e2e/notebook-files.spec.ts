import type { Download, Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { answered, openChat, script, sendMessage, uniqueKey } from "./support/chat";
import { runNbformat, validateWithNbformat } from "./support/nbformat";
import { cell, cellCode, cellOutput, fillCell, openPlayground, runCellN } from "./support/playground";
import { seedStoredSnapshot } from "./support/snapshot-seed";

const code = cellCode;
const out = cellOutput;
const count = (page: Page, n: number) => cell(page, n).locator(".cell-count");
const notebookList = (page: Page) => page.getByRole("list", { name: "Notebooks" }).getByRole("listitem");
const title = (page: Page) => page.getByRole("textbox", { name: "Notebook title" });
const ready = (page: Page) => expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });

async function text(download: Download): Promise<string> {
  const chunks = await (await download.createReadStream()).toArray();
  return Buffer.concat(chunks).toString("utf8");
}

const fill = fillCell;
const runCell = runCellN;

/** Chooses a file in Open notebook's file chooser. */
async function openFile(page: Page, name: string, contents: string) {
  const chooser = page.waitForEvent("filechooser");
  await page.getByRole("button", { name: "Open notebook" }).click();
  await (await chooser).setFiles({ name, mimeType: "application/octet-stream", buffer: Buffer.from(contents) });
}

/** Presses Download notebook (in `scope`, by default the page) and returns the file's name and text. */
async function downloadNotebook(page: Page, scope: Pick<Page, "getByRole"> = page) {
  const download = page.waitForEvent("download");
  await scope.getByRole("button", { name: "Download notebook" }).click();
  const file = await download;
  return { name: file.suggestedFilename(), text: await text(file) };
}

/**
 * A notebook as Jupyter's own nbformat writes it: a Markdown cell, a cell with a stream and a
 * value, a cell whose code raises (with its error), then a cell with an HTML display and a
 * MIME type no one shows; and notebook metadata of its own.
 */
const JUPYTER_NOTEBOOK = `
import nbformat, sys
from nbformat.v4 import new_notebook, new_code_cell, new_markdown_cell, new_output
nb = new_notebook(metadata={
    "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
    "language_info": {"name": "python", "version": "3.12.1"},
    "kiln_test": {"made_by": "nbformat", "answer": 42},
})
nb.cells = [
    new_markdown_cell("# Sales report\\n\\nFrom *Jupyter*."),
    new_code_cell("print('hello from the cell')\\n6 * 7", execution_count=1, outputs=[
        new_output("stream", name="stdout", text="hello from jupyter\\n"),
        new_output("execute_result", data={"text/plain": "42"}, execution_count=1),
    ]),
    new_code_cell("1 / 0", execution_count=2, outputs=[
        new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                   traceback=["\\x1b[0;31mZeroDivisionError\\x1b[0m: division by zero"]),
    ]),
    new_code_cell("show_table()", execution_count=3, outputs=[
        new_output("display_data", data={
            "text/html": "<table><tr><td>north</td><td>17</td></tr></table>",
            "text/plain": "table of 1 row",
            "application/x-kiln-unknown": "payload nobody renders",
        }),
    ]),
]
nbformat.validate(nb)
sys.stdout.write(nbformat.writes(nb))
`;

interface NbCell {
  cell_type: string;
  source: string[];
  execution_count?: number | null;
  outputs?: { output_type: string; text?: string[]; data?: Record<string, unknown>; execution_count?: number; ename?: string }[];
}

test("a notebook written by Jupyter opens with its cells and outputs, runs, and downloads as a notebook Jupyter validates", async ({ page }) => {
  await openPlayground(page);
  const before = await notebookList(page).count();
  await openFile(page, "Sales report.ipynb", runNbformat(JUPYTER_NOTEBOOK));

  await expect(title(page)).toHaveValue("Sales report");
  await expect(notebookList(page)).toHaveCount(before + 1);
  await expect(notebookList(page).getByRole("button", { name: "Sales report", exact: true })).toHaveAttribute("aria-current", "true");
  await expect(cell(page, 1).getByRole("heading", { name: "Sales report" })).toBeVisible();
  await expect(code(page, 2)).toContainText("print('hello from the cell')");
  // The outputs as the file has them, with its counts: nothing ran.
  await expect(out(page, 2)).toContainText("hello from jupyter");
  await expect(out(page, 2)).toContainText("42");
  await expect(count(page, 2)).toHaveText("[1]");
  await expect(out(page, 3)).toContainText("ZeroDivisionError");
  await expect(count(page, 3)).toHaveText("[2]");
  await expect(out(page, 4).frameLocator("iframe").getByRole("cell", { name: "north" })).toBeVisible({ timeout: 30_000 });
  await expect(count(page, 4)).toHaveText("[3]");

  // Run all runs the cells in order, and stops at the one that raises: the last keeps what its file showed.
  await ready(page);
  await page.getByRole("button", { name: "Run all" }).click();
  await expect(out(page, 3)).toHaveAttribute("data-finished-runs", "1", { timeout: 90_000 });
  await expect(out(page, 2)).toContainText("hello from the cell");
  await expect(out(page, 2)).not.toContainText("hello from jupyter");
  await expect(out(page, 3)).toContainText("division by zero");
  const ran = Number((await count(page, 2).textContent())?.slice(1, -1));
  expect(ran).toBeGreaterThan(3);
  await expect(count(page, 3)).toHaveText(`[${ran + 1}]`);
  await expect(count(page, 4)).toHaveText("[3]");

  const file = await downloadNotebook(page);
  expect(file.name).toBe("Sales-report.ipynb");
  validateWithNbformat(file.text);
  // Read back by nbformat itself: what the page showed, and what Kiln does not show kept.
  const doc = JSON.parse(runNbformat("import nbformat, sys, json\nnb = nbformat.reads(sys.stdin.read(), as_version=4)\nprint(json.dumps(nb))", file.text)) as {
    metadata: Record<string, unknown>;
    cells: NbCell[];
  };
  expect(doc.metadata.kiln_test).toEqual({ made_by: "nbformat", answer: 42 });
  expect(doc.metadata.language_info).toEqual({ name: "python", version: "3.12.1" });
  expect(doc.cells.map((c) => c.cell_type)).toEqual(["markdown", "code", "code", "code"]);
  const [, first, second, third] = doc.cells;
  expect(first.execution_count).toBe(ran);
  expect(first.outputs).toEqual([
    { output_type: "stream", name: "stdout", text: "hello from the cell\n" },
    { output_type: "execute_result", execution_count: ran, data: { "text/plain": "42" }, metadata: {} },
  ]);
  expect(second.execution_count).toBe(ran + 1);
  expect(second.outputs?.map((o) => [o.output_type, o.ename])).toEqual([["error", "ZeroDivisionError"]]);
  expect(third.execution_count).toBe(3);
  expect(third.outputs?.[0].data).toEqual({
    "text/html": "<table><tr><td>north</td><td>17</td></tr></table>",
    "text/plain": "table of 1 row",
    "application/x-kiln-unknown": "payload nobody renders",
  });
});

test("a percent-format Python file opens as code and Markdown cells", async ({ page }) => {
  await openPlayground(page);
  await openFile(page, "steps.py", "# %% [markdown]\n# ## Load the data\n\n# %%\nrows = [3, 4]\nsum(rows)\n");
  await expect(title(page)).toHaveValue("steps");
  await expect(cell(page, 1).getByRole("heading", { name: "Load the data" })).toBeVisible();
  await expect(code(page, 2)).toContainText("rows = [3, 4]");
  await expect(cell(page, 3)).toHaveCount(0);
  await ready(page);
  await runCell(page, 2);
  await expect(out(page, 2)).toHaveText("7");
});

test("a notebook dropped on the page opens; other files dropped go to the Files panel", async ({ page }) => {
  await openPlayground(page);
  const before = await notebookList(page).count();
  const drop = async (name: string, contents: string, where = page.locator(".notebook")) => {
    const dataTransfer = await page.evaluateHandle(
      ([name, contents]) => {
        const data = new DataTransfer();
        data.items.add(new File([contents], name));
        return data;
      },
      [name, contents],
    );
    await where.dispatchEvent("drop", { dataTransfer });
  };
  const notebook = JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [{ cell_type: "code", id: "a", metadata: {}, execution_count: null, outputs: [], source: "dropped = True" }] });
  await drop("dropped.ipynb", notebook);
  await expect(title(page)).toHaveValue("dropped");
  await expect(code(page, 1)).toContainText("dropped = True");
  await expect(notebookList(page)).toHaveCount(before + 1);

  await ready(page);
  await drop("table.csv", "a,b\n1,2\n");
  await expect(page.getByRole("list", { name: "Files" })).toContainText("table.csv");
  await expect(notebookList(page)).toHaveCount(before + 1);
  await expect(title(page)).toHaveValue("dropped");

  // Dropped on the list of notebooks, outside the open one: opened too.
  await drop("second.py", "# %%\nsecond = 2\n", page.getByRole("list", { name: "Notebooks" }));
  await expect(title(page)).toHaveValue("second");
  await expect(code(page, 1)).toContainText("second = 2");
  await expect(notebookList(page)).toHaveCount(before + 2);
});

test("a malformed notebook and an nbformat 3 one are refused with their reasons, and the open notebook stays as it was", async ({ page }) => {
  await openPlayground(page);
  await fill(page, 1, "print('still here')");
  await runCell(page, 1);
  await expect(out(page, 1)).toHaveText("still here");
  const list = await notebookList(page).allTextContents();
  const openTitle = await title(page).inputValue();

  await openFile(page, "broken.ipynb", '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code"');
  await expect(page.getByRole("alert")).toContainText("“broken.ipynb” was not opened. This file is not a notebook: it is not valid JSON");
  await openFile(page, "old.ipynb", JSON.stringify({ nbformat: 3, nbformat_minor: 0, metadata: {}, worksheets: [] }));
  await expect(page.getByRole("alert")).toHaveText(
    "“old.ipynb” was not opened. This notebook is in nbformat 3, an older format Kiln does not read. Open it in Jupyter and save it to convert it to nbformat 4.",
  );
  await openFile(page, "cells.ipynb", JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [{ cell_type: "code", metadata: {} }] }));
  await expect(page.getByRole("alert")).toHaveText("“cells.ipynb” was not opened. This notebook cannot be opened: cell 1 has no source.");

  expect(await notebookList(page).allTextContents()).toEqual(list);
  await expect(title(page)).toHaveValue(openTitle);
  await expect(code(page, 1)).toContainText("print('still here')");
  await expect(out(page, 1)).toHaveText("still here");
  await expect(count(page, 1)).toHaveText("[1]");
  // And after a reload, as stored.
  await page.reload();
  await expect(out(page, 1)).toHaveText("still here");
  expect(await notebookList(page).allTextContents()).toEqual(list);
});

test("a share link opens in a fresh browser with its cells and nothing run, until Run cell", async ({ page, browser, storedSnapshot }) => {
  await openPlayground(page);
  await page.getByRole("button", { name: "New notebook" }).click();
  await expect(title(page)).toHaveValue("Untitled notebook");
  await title(page).fill("Shared steps");
  await fill(page, 1, "print('RAN' + '-MARKER')\nopen('ran.txt', 'w').write('ran');");
  await page.getByRole("button", { name: "Add code cell" }).click();
  await fill(page, 2, "import os\nprint('file there:', os.path.exists('ran.txt'))");
  await page.getByRole("button", { name: "Add Markdown cell" }).click();
  await cell(page, 3).getByRole("textbox", { name: "Markdown" }).fill("Read *this* first.");

  await page.getByRole("button", { name: "Share link" }).click();
  const box = page.getByRole("textbox", { name: "Link to this notebook" });
  await expect(box).toBeFocused();
  const link = await box.inputValue();
  expect(await box.evaluate((input: HTMLInputElement) => input.value.slice(input.selectionStart ?? 0, input.selectionEnd ?? 0))).toBe(link);
  expect(link).toMatch(/^http:\/\/localhost:\d+\/#\/playground\/shared\/[A-Za-z0-9_-]+$/);
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.getByRole("button", { name: "Copy", exact: true }).click();
  await expect(page.getByText("Copied.")).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);

  // A fresh browser: no notebooks stored (only Python's start-up snapshot, to start faster).
  const context = await browser.newContext();
  try {
    await seedStoredSnapshot(context, await storedSnapshot());
    const other = await context.newPage();
    const errors: string[] = [];
    other.on("pageerror", (error) => errors.push(error.message));
    const requests: string[] = [];
    other.on("request", (request) => requests.push(request.url()));
    await other.goto(link);
    await expect(title(other)).toHaveValue("Shared steps");
    await expect(code(other, 1)).toContainText("print('RAN' + '-MARKER')");
    await expect(code(other, 2)).toContainText("os.path.exists('ran.txt')");
    await expect(cell(other, 3).getByText("this", { exact: true })).toBeVisible();
    // The address now names the notebook: a reload opens it, not a second copy.
    await expect(other).toHaveURL(/#\/playground\/[0-9a-f-]{36}$/);
    await ready(other);
    await expect(count(other, 1)).toHaveText("[ ]");
    await expect(out(other, 1)).toHaveText("");
    // Cell 2 runs after anything queued before it: cell 1 did not run, and made no file.
    await runCell(other, 2);
    await expect(out(other, 2)).toHaveText("file there: False");
    await expect(out(other, 1)).toHaveText("");
    await expect(count(other, 1)).toHaveText("[ ]");
    // Run cell does run it.
    await runCell(other, 1);
    await expect(out(other, 1)).toHaveText("RAN-MARKER");
    await runCell(other, 2);
    await expect(out(other, 2)).toHaveText("file there: True");

    await other.reload();
    await expect(title(other)).toHaveValue("Shared steps");
    await expect(notebookList(other).getByRole("button", { name: "Shared steps", exact: true })).toHaveCount(1);
    // The notebook went to no server: no request carried its data.
    const data = link.split("/shared/")[1];
    expect(requests.filter((url) => url.includes(data.slice(0, 40)))).toEqual([]);
    expect(errors).toEqual([]);
  } finally {
    await context.close();
  }
});

test("a broken share link says so and opens the usual notebook", async ({ page }) => {
  await openPlayground(page);
  const usual = await title(page).inputValue();
  await page.goto("/#/playground/shared/AAAA-not-a-notebook");
  await expect(page.getByRole("alert")).toContainText("This link's notebook cannot be opened:");
  await expect(title(page)).toHaveValue(usual);
  await expect(page).toHaveURL(/#\/playground\/[0-9a-f-]{36}$/);
});

test("a notebook too big for a link says so with its size and the limit, and offers Download notebook", async ({ page }) => {
  await openPlayground(page);
  // Random letters do not compress: past 32,000 characters once encoded.
  const noise = Array.from({ length: 60_000 }, () => "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[Math.floor(Math.random() * 62)]).join("");
  await openFile(page, "big.py", `# %%\nnoise = "${noise}"\n`);
  await expect(title(page)).toHaveValue("big");
  await page.getByRole("button", { name: "Share link" }).click();
  const refusal = page.getByRole("alert");
  await expect(refusal).toContainText(/This notebook is too large for a link: it takes [\d,]+ characters, and a link holds at most 32,000\. Download it instead\./);
  await expect(page.getByRole("textbox", { name: "Link to this notebook" })).toHaveCount(0);
  const file = await downloadNotebook(page, refusal);
  expect(file.name).toBe("big.ipynb");
  expect(file.text).toContain(noise);
});

test("Open as notebook makes a notebook of a conversation, whose next cell runs", async ({ page }) => {
  const key = uniqueKey("open-as-notebook");
  await script(key, [
    { content: [{ type: "text", text: "Let me compute it." }, { type: "tool_use", name: "python", input: { code: "values = [2, 4, 6]\nprint(sum(values) / 3)" } }] },
    { content: [{ type: "text", text: "The mean is 4.0." }] },
  ]);
  await openChat(page, key);
  await sendMessage(page, "What is the mean of 2, 4 and 6?");
  await answered(page, "The mean is 4.0.");
  await page.getByRole("button", { name: "Open as notebook" }).click();

  await expect(page).toHaveURL(/#\/playground\/[0-9a-f-]{36}$/);
  await expect(cell(page, 1).getByText("What is the mean of 2, 4 and 6?")).toBeVisible({ timeout: 30_000 });
  await expect(cell(page, 2).getByText("Let me compute it.")).toBeVisible();
  await expect(code(page, 3)).toContainText("values = [2, 4, 6]");
  await expect(out(page, 3)).toHaveText("4.0");
  await expect(count(page, 3)).toHaveText("[1]");
  await expect(cell(page, 4).getByText("The mean is 4.0.")).toBeVisible();

  await ready(page);
  await code(page, 3).click();
  await page.getByRole("button", { name: "Add code cell" }).click();
  await expect(code(page, 4)).toBeFocused();
  await fill(page, 4, "print(max([2, 4, 6]) * 7)");
  await runCell(page, 4);
  await expect(out(page, 4)).toHaveText("42");
  await expect(count(page, 4)).toHaveText("[2]");
});
