import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { cell, cellCode, cellOutput, fillCell, openPlayground, runCellN } from "./support/playground";
import { storedRecords } from "./support/stored";

const code = cellCode;
const out = cellOutput;
const count = (page: Page, n: number) => cell(page, n).locator(".cell-count");
/** The Markdown box of cell `n`, while it is being written. */
const markdownBox = (page: Page, n: number) => cell(page, n).getByRole("textbox", { name: "Markdown" });

/** Adds a Markdown cell as Cell 2 (after Cell 1, focused last), writes `source` in it and renders it with Ctrl+Enter. */
async function addMarkdownCell(page: Page, source: string) {
  await page.getByRole("button", { name: "Add Markdown cell" }).click();
  await markdownBox(page, 2).fill(source);
  await markdownBox(page, 2).press("Control+Enter");
}

const fill = fillCell;
const runCell = runCellN;

/** A new notebook (one empty code cell), open, named `title`. */
async function newNotebook(page: Page, title?: string) {
  const before = await page.getByRole("list", { name: "Notebooks" }).getByRole("listitem").count();
  await page.getByRole("button", { name: "New notebook" }).click();
  await expect(page.getByRole("list", { name: "Notebooks" }).getByRole("listitem")).toHaveCount(before + 1);
  await expect(page.getByRole("textbox", { name: "Notebook title" })).toHaveValue("Untitled notebook");
  await expect(cell(page, 2)).toHaveCount(0);
  if (title) await page.getByRole("textbox", { name: "Notebook title" }).fill(title);
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
}

test("cells are added after the one focused, moved, deleted and change kind", async ({ page }) => {
  await openPlayground(page);
  await newNotebook(page);
  await fill(page, 1, "first = 1");
  await page.getByRole("button", { name: "Add code cell" }).click();
  await expect(code(page, 2)).toBeFocused();
  await page.keyboard.type("second = 2");
  // Added after the cell focused last (Cell 1), not at the end.
  await code(page, 1).click();
  await page.getByRole("button", { name: "Add Markdown cell" }).click();
  const markdown = markdownBox(page, 2);
  await expect(markdown).toBeFocused();
  await markdown.fill("## Notes");
  await expect(code(page, 3)).toContainText("second = 2");

  await cell(page, 2).getByRole("button", { name: "Move cell down" }).click();
  await expect(code(page, 2)).toContainText("second = 2");
  await expect(markdownBox(page, 3)).toHaveValue("## Notes");
  await cell(page, 2).getByRole("button", { name: "Move cell up" }).click();
  await expect(code(page, 1)).toContainText("second = 2");
  await expect(cell(page, 1).getByRole("button", { name: "Move cell up" })).toBeDisabled();

  await cell(page, 3).getByRole("combobox", { name: "Cell type" }).selectOption("code");
  await expect(code(page, 3)).toContainText("## Notes");
  await cell(page, 1).getByRole("combobox", { name: "Cell type" }).selectOption("markdown");
  await expect(markdownBox(page, 1)).toHaveValue("second = 2");

  await cell(page, 1).getByRole("button", { name: "Delete cell" }).click();
  await expect(cell(page, 3)).toHaveCount(0);
  await expect(code(page, 1)).toContainText("first = 1");
  await expect(code(page, 2)).toContainText("## Notes");
});

test("counts; Shift+Enter runs and moves to the next cell (adding one), Ctrl+Enter runs in place", async ({ page }) => {
  await openPlayground(page);
  await newNotebook(page);
  await expect(count(page, 1)).toHaveText("[ ]");
  await fill(page, 1, "x = 20");
  await code(page, 1).press("Shift+Enter");
  await expect(code(page, 2)).toBeFocused();
  await expect(count(page, 1)).toHaveText("[1]", { timeout: 90_000 });
  await page.keyboard.type("x * 2 + 2");
  await page.keyboard.press("Control+Enter");
  await expect(out(page, 2)).toHaveText("42", { timeout: 90_000 });
  await expect(count(page, 2)).toHaveText("[2]");
  await expect(cell(page, 3)).toHaveCount(0);
  await expect(code(page, 2)).toBeFocused();
  // Run again: the count goes on.
  await code(page, 1).click();
  await code(page, 1).press("Control+Enter");
  await expect(count(page, 1)).toHaveText("[3]", { timeout: 90_000 });
  await expect(cell(page, 1)).toHaveAttribute("data-state", "done");
});

test("Run all runs the cells in order and stops at the first error, leaving the rest unrun", async ({ page }) => {
  await openPlayground(page);
  await newNotebook(page);
  await fill(page, 1, "print('one')");
  for (const text of ["1 / 0", "print('three')"]) {
    await page.getByRole("button", { name: "Add code cell" }).click();
    await page.keyboard.type(text);
  }
  await expect(code(page, 3)).toHaveText("print('three')");
  await page.getByRole("button", { name: "Run all" }).click();
  await expect(cell(page, 2)).toHaveAttribute("data-state", "failed", { timeout: 90_000 });
  await expect(cell(page, 2).getByText("failed", { exact: true })).toBeVisible();
  await expect(out(page, 2)).toContainText("ZeroDivisionError");
  await expect(out(page, 1)).toHaveText("one");
  await expect(cell(page, 1)).toHaveAttribute("data-state", "done");
  await expect(count(page, 1)).toHaveText("[1]");
  await expect(count(page, 2)).toHaveText("[2]");
  // Cell 3 never ran.
  await page.waitForTimeout(1000);
  await expect(cell(page, 3)).toHaveAttribute("data-state", "idle");
  await expect(count(page, 3)).toHaveText("[ ]");
  await expect(out(page, 3)).toHaveText("");
});

test("queued and running cells show it; Stop stops the running one and drops the queue; Restart clears counts", async ({ page }) => {
  await openPlayground(page);
  await newNotebook(page);
  await fill(page, 1, "kept = 1\nimport time\ntime.sleep(60)");
  await page.getByRole("button", { name: "Add code cell" }).click();
  await page.keyboard.type("print('after')");
  await page.getByRole("button", { name: "Run all" }).click();
  await expect(cell(page, 1)).toHaveAttribute("data-state", "running", { timeout: 90_000 });
  await expect(cell(page, 1).getByText("running", { exact: true })).toBeVisible();
  await expect(cell(page, 2)).toHaveAttribute("data-state", "queued");
  await expect(cell(page, 2).getByText("queued", { exact: true })).toBeVisible();
  await expect(count(page, 1)).toHaveText("[*]");
  await expect(count(page, 2)).toHaveText("[*]");
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(out(page, 1)).toContainText("Interrupted", { timeout: 30_000 });
  await expect(cell(page, 1)).toHaveAttribute("data-state", "failed");
  await expect(cell(page, 2)).toHaveAttribute("data-state", "idle");
  await expect(out(page, 2)).toHaveText("");

  await page.getByRole("button", { name: "Restart" }).click();
  await expect(count(page, 1)).toHaveText("[ ]");
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await fill(page, 2, "'kept' in globals()");
  await runCell(page, 2);
  await expect(out(page, 2)).toHaveText("False");
  await expect(count(page, 2)).toHaveText("[1]");
});

test("a Markdown cell shows its text rendered, and a script in it does not run", async ({ page }) => {
  await openPlayground(page);
  await newNotebook(page);
  const source = '## Results\n\nSome *words*.\n\n<script>window.kilnRan = "script"</script><img src="x" onerror="window.kilnRan = \'img\'">';
  await addMarkdownCell(page, source);
  await expect(cell(page, 2).getByRole("heading", { name: "Results" })).toBeVisible();
  await expect(cell(page, 2).locator("em")).toHaveText("words");
  await expect(markdownBox(page, 2)).toHaveCount(0);
  // The payload is there, in the cell's source, and nothing of it ran.
  await cell(page, 2).getByRole("button", { name: "Edit" }).click();
  await expect(markdownBox(page, 2)).toHaveValue(source);
  await markdownBox(page, 2).press("Shift+Enter");
  await expect(cell(page, 2).locator("script, [onerror]")).toHaveCount(0);
  await page.waitForTimeout(500);
  expect(await page.evaluate(() => (window as unknown as { kilnRan?: string }).kilnRan)).toBeUndefined();
  // Shift+Enter on the last cell added a code cell after it.
  await expect(code(page, 3)).toBeFocused();
});

test("a Markdown cell lays out its formulas with KaTeX, and leaves prices as text", async ({ page }) => {
  await openPlayground(page);
  await newNotebook(page);
  await addMarkdownCell(page, "Euler: $e^{i\\pi} + 1 = 0$, for $5 or $10.\n\n$$\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}$$");
  const view = cell(page, 2).locator(".markdown");
  await expect(view.locator(".math-inline .katex")).toHaveCount(1);
  await expect(view.locator(".math-display .katex-display")).toHaveCount(1);
  await expect(view.locator("annotation").first()).toHaveText("e^{i\\pi} + 1 = 0");
  await expect(view).toContainText("for $5 or $10.");
});

test("a reload brings back the variables, outputs and counts: a later cell uses a variable without rerunning the first", async ({ page }) => {
  await openPlayground(page);
  await newNotebook(page);
  await fill(page, 1, "secret = 41\nprint('defined')");
  await runCell(page, 1);
  await page.getByRole("button", { name: "Add code cell" }).click();
  await page.keyboard.type("print(secret + 1)");
  await expect
    .poll(async () => JSON.stringify(await storedRecords(page, "notebooks")), { timeout: 10_000 })
    .toContain("print(secret + 1)");
  await expect.poll(async () => (await storedRecords(page, "interpreterState")).length, { timeout: 10_000 }).toBeGreaterThan(0);
  await page.reload();
  await expect(page.getByText("Python state restored: secret")).toBeVisible({ timeout: 90_000 });
  await expect(out(page, 1)).toHaveText("defined");
  await expect(count(page, 1)).toHaveText("[1]");
  await runCell(page, 2);
  await expect(out(page, 2)).toHaveText("42");
  await expect(count(page, 2)).toHaveText("[2]");
  await expect(out(page, 1)).toHaveText("defined");
});

test("several notebooks: each its own title and variables; the URL names the open one; one is deleted", async ({ page }) => {
  await openPlayground(page);
  const list = page.getByRole("list", { name: "Notebooks" });
  await newNotebook(page, "Alpha");
  await expect(list.getByRole("button", { name: "Alpha", exact: true })).toBeVisible();
  await fill(page, 1, "where = 'alpha'");
  await runCell(page, 1);
  const alphaUrl = page.url();
  expect(alphaUrl).toMatch(/#\/playground\/[\w-]+$/);

  await newNotebook(page, "Beta");
  await fill(page, 1, "'where' in globals()");
  await runCell(page, 1);
  await expect(out(page, 1)).toHaveText("False");

  await list.getByRole("button", { name: "Alpha", exact: true }).click();
  await expect(page.getByRole("textbox", { name: "Notebook title" })).toHaveValue("Alpha");
  expect(page.url()).toBe(alphaUrl);
  await fill(page, 1, "where");
  await runCell(page, 1);
  await expect(out(page, 1)).toHaveText("'alpha'");

  // The title is kept; `#/playground` opens the notebook used last.
  await page.goto("/#/playground");
  await expect(page.getByRole("textbox", { name: "Notebook title" })).toHaveValue("Alpha");

  await list.getByRole("button", { name: "Delete Beta" }).click();
  await page.getByRole("group", { name: "Delete Beta?" }).getByRole("button", { name: "Delete" }).click();
  await expect(list.getByRole("button", { name: "Beta", exact: true })).toHaveCount(0);
  await expect(list.getByRole("button", { name: "Alpha", exact: true })).toBeVisible();
  // Deleting the open one opens another.
  await list.getByRole("button", { name: "Delete Alpha" }).click();
  await page.getByRole("group", { name: "Delete Alpha?" }).getByRole("button", { name: "Delete" }).click();
  await expect(list.getByRole("button", { name: "Alpha", exact: true })).toHaveCount(0);
  await expect(page.getByRole("textbox", { name: "Notebook title" })).not.toHaveValue("Alpha");
  await expect(cell(page, 1)).toBeVisible();
});

test("two tabs on one notebook: the second follows it read-only, and takes it over with Use it here", async ({ page }) => {
  await openPlayground(page);
  await newNotebook(page);
  await fill(page, 1, "print('from the first tab')");
  await runCell(page, 1);
  const other = await page.context().newPage();
  await other.goto(page.url());
  const elsewhere = other.getByText("This notebook is open in another tab");
  await expect(elsewhere).toBeVisible({ timeout: 30_000 });
  await expect(out(other, 1)).toHaveText("from the first tab");
  await expect(other.getByRole("button", { name: "Run all" })).toBeDisabled();
  await expect(cell(other, 1).getByRole("button", { name: "Run cell" })).toBeDisabled();

  // It follows the first tab's edits and outputs.
  await fill(page, 1, "print('edited')");
  await runCell(page, 1);
  await expect(code(other, 1)).toContainText("print('edited')");
  await expect(out(other, 1)).toHaveText("edited");

  await other.getByRole("button", { name: "Use it here" }).click();
  await expect(elsewhere).toHaveCount(0, { timeout: 30_000 });
  await expect(page.getByText("This notebook is open in another tab")).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole("button", { name: "Run all" })).toBeDisabled();
  await expect(other.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await fill(other, 1, "print('second tab runs it')");
  await runCell(other, 1);
  await expect(out(page, 1)).toHaveText("second tab runs it");
  await other.close();
});
