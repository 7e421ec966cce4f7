import { expect, type Page } from "@playwright/test";

/** Open the Playground and wait until Python is ready. */
export async function openPlayground(page: Page): Promise<void> {
  await page.goto("/#/playground");
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
}

/** Cell `n` (from 1) of the open notebook. */
export function cell(page: Page, n = 1) {
  return page.getByRole("region", { name: `Cell ${n}`, exact: true });
}

/** The code of cell `n` of the open notebook. */
export const cellCode = (page: Page, n: number) => cell(page, n).getByRole("textbox", { name: "Python code" });

/** The output of cell `n` of the open notebook. */
export const cellOutput = (page: Page, n: number) => cell(page, n).getByRole("region", { name: "Output" });

/** Replace cell `n`'s code (focusing it first makes its editor). */
export async function fillCell(page: Page, n: number, source: string): Promise<void> {
  await cellCode(page, n).click();
  await expect(cellCode(page, n)).toHaveAttribute("contenteditable", "true");
  await cellCode(page, n).fill(source);
  await expect(cellCode(page, n)).toHaveText(source.split("\n").join(""), { useInnerText: false });
}

/** Run cell `n` with its Run cell button and wait for the run to end. */
export async function runCellN(page: Page, n: number): Promise<void> {
  const before = Number(await cellOutput(page, n).getAttribute("data-finished-runs"));
  await cell(page, n).getByRole("button", { name: "Run cell" }).click();
  await expect(cellOutput(page, n)).toHaveAttribute("data-finished-runs", String(before + 1), { timeout: 90_000 });
}

/** The widget's page (`embed.html`) has one editor and one output; the Playground, a notebook of cells. */
const isWidget = (page: Page) => new URL(page.url()).pathname.endsWith("/embed.html");

/** Where the helpers below act: the open notebook's first cell, or the whole widget. */
const first = (page: Page) => (isWidget(page) ? page.locator("body") : cell(page));

/** The code of the open notebook's first cell (the widget's editor). */
export function editor(page: Page) {
  return first(page).getByRole("textbox", { name: "Python code" });
}

/** The output of the open notebook's first cell (the widget's output). */
export function output(page: Page) {
  return first(page).getByRole("region", { name: "Output" });
}

/** Replace the first cell's code with `code`. */
export async function setCode(page: Page, code: string): Promise<void> {
  // The editor is made as the cell comes into view (or is focused): fill it once it is there.
  await expect(editor(page)).toHaveAttribute("contenteditable", /true|false/, { timeout: 30_000 });
  await editor(page).fill(code);
  await expect(editor(page)).toHaveText(code.split("\n").join(""), { useInnerText: false });
}

async function finishedRuns(page: Page): Promise<number> {
  return Number(await output(page).getAttribute("data-finished-runs"));
}

/** Start a run of the first cell and return at once; the returned function waits for it to end. */
export async function startRun(page: Page, code: string): Promise<(timeout?: number) => Promise<void>> {
  await setCode(page, code);
  const before = await finishedRuns(page);
  await first(page)
    .getByRole("button", { name: isWidget(page) ? "Run" : "Run cell", exact: true })
    .click();
  return (timeout = 90_000) => expect(output(page)).toHaveAttribute("data-finished-runs", String(before + 1), { timeout });
}

/** Run `code` in the first cell and wait for the run to end. */
export async function run(page: Page, code: string): Promise<void> {
  await (await startRun(page, code))();
}
