/** `data-kiln-preload="visible"`: a cell's session starts its interpreter when the cell comes into view, and not before. */
import type { Page, Worker } from "@playwright/test";
import { expect, test as base } from "./support/test";
import { serveCellPages, type CellPages } from "./support/cell-pages";

// Playwright reads a fixture's dependencies from its first parameter: here, none.
// eslint-disable-next-line no-empty-pattern
const test = base.extend<object, { cellPages: CellPages }>({ cellPages: [({}, use) => serveCellPages(use), { scope: "worker" }] });

const status = (page: Page, n: number) => page.frameLocator(`iframe[title="Python cell ${n}"]`).getByRole("status").first();

test("a preloading cell in view starts its session's worker before any Run; one out of view does not, until it is scrolled to", async ({
  page,
  cellPages,
}) => {
  const alive = new Set<Worker>();
  page.on("worker", (worker) => {
    alive.add(worker);
    worker.on("close", () => alive.delete(worker));
  });
  const path = cellPages.add(`
<pre class="kiln" data-kiln-preload="visible">seen = 'in view'</pre>
<div style="height: 6000px">A long page.</div>
<pre class="kiln" data-kiln-session="below" data-kiln-preload="visible">print('far below')</pre>`);
  // Another site: its frames get no storage, so a start boots Pyodide (and its worker) for real.
  await page.setViewportSize({ width: 1000, height: 700 });
  await page.goto(cellPages.otherSite + path);
  await expect(page.locator("iframe.kiln-cell")).toHaveCount(2);

  // The cell in view: its session starts with nobody pressing Run.
  await expect(status(page, 1)).toHaveText(/Python ready/, { timeout: 120_000 });
  await expect.poll(() => alive.size).toBeGreaterThan(0);
  const oneSession = alive.size;
  // The cell below the fold: nothing, given time to start anything it would.
  await page.waitForTimeout(3_000);
  await expect(status(page, 2)).toHaveText("Python starts when you press Run");
  expect(alive.size).toBe(oneSession);

  // Scrolled into view, it starts its own session's interpreter, still with no Run.
  await page.locator('iframe[title="Python cell 2"]').scrollIntoViewIfNeeded();
  await expect(status(page, 2)).toHaveText(/Python ready/, { timeout: 120_000 });
  await expect.poll(() => alive.size).toBe(2 * oneSession);
  const output = page.frameLocator('iframe[title="Python cell 2"]').getByRole("region", { name: "Output" });
  await expect(output).toHaveAttribute("data-finished-runs", "0");
});
