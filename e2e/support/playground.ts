import { expect, type Page } from "@playwright/test";

/** Open the Playground and wait until Python is ready. */
export async function openPlayground(page: Page): Promise<void> {
  await page.goto("/#/playground");
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
}

export function editor(page: Page) {
  return page.getByRole("textbox", { name: "Python code" });
}

export function output(page: Page) {
  return page.getByRole("region", { name: "Output" });
}

/** Replace the editor's code with `code`. */
export async function setCode(page: Page, code: string): Promise<void> {
  await editor(page).fill(code);
  await expect(editor(page)).toHaveText(code.split("\n").join(""), { useInnerText: false });
}

async function finishedRuns(page: Page): Promise<number> {
  return Number(await output(page).getAttribute("data-finished-runs"));
}

/** Start a run and return at once; the returned function waits for it to end. */
export async function startRun(page: Page, code: string): Promise<(timeout?: number) => Promise<void>> {
  await setCode(page, code);
  const before = await finishedRuns(page);
  await page.getByRole("button", { name: "Run" }).click();
  return (timeout = 90_000) => expect(output(page)).toHaveAttribute("data-finished-runs", String(before + 1), { timeout });
}

/** Run `code` and wait for the run to end. */
export async function run(page: Page, code: string): Promise<void> {
  await (await startRun(page, code))();
}
