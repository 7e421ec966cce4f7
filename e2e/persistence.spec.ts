import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { fillDisk, leavingAsksFirst, readStorageOnPage, setDiskFull, storedRecords } from "./support/stored";
import { editor, openPlayground, output, run, setCode, startRun } from "./support/playground";

test("the notebook's code and output survive a reload", async ({ page }) => {
  await openPlayground(page);
  const code = 'print("kept across reloads")\n21 * 2';
  await run(page, code);
  await expect(output(page)).toHaveText("kept across reloads\n42");
  // Stored (the notebook's record with the code, and one part of output) before the reload.
  await expect.poll(() => saved(page)).toEqual({ code: true, parts: 1 });
  await page.reload();
  await expect(editor(page)).toContainText('print("kept across reloads")');
  await expect(output(page)).toHaveText("kept across reloads\n42");
  await expect(page.getByRole("status")).toContainText(/Python ready · Python 3\.\d+\.\d+ · Pyodide 314\.0\.\d+/, {
    timeout: 90_000,
  });
});

/** Whether the notebook's record holds the code run, and how many parts of output are stored. */
async function saved(page: Page): Promise<{ code: boolean; parts: number }> {
  const notebooks = await storedRecords<{ cells: { source: string }[] }>(page, "notebooks");
  const code = notebooks.some((notebook) => notebook.cells.some((cell) => cell.source.includes("kept across reloads")));
  return { code, parts: (await storedRecords(page, "cellOutputs")).length };
}

test("code typed during a run is saved, and survives a reload before the run ends", async ({ page }) => {
  await openPlayground(page);
  await run(page, "before_the_run = 1");
  await startRun(page, 'print("long run")\nimport time\ntime.sleep(30)');
  await expect(output(page)).toContainText("long run");
  await editor(page).press("End");
  await editor(page).pressSequentially("\n# typed while it ran");
  await expect(page.getByRole("status")).toContainText("Running");
  await page.waitForTimeout(1000);
  await page.reload();
  await expect(editor(page)).toContainText("# typed while it ran");
});

test("a save that storage refuses says so, and the next edit saves again once there is room", async ({ page }) => {
  await openPlayground(page);
  await run(page, "1 + 1");
  await fillDisk(page, { notebooks: true });
  await setCode(page, "refused = 'by a full disk'");
  const alert = page.getByRole("alert").filter({ hasText: "Your code could not be saved" });
  await expect(alert).toContainText("(QuotaExceededError: The quota has been exceeded). ");
  // Leaving now asks first; the person stays, and the code is still there.
  await leavingAsksFirst(page);
  await expect(editor(page)).toContainText("refused = 'by a full disk'");
  await setDiskFull(page, false);
  await setCode(page, "kept = 'once there is room'");
  await expect(alert).toHaveCount(0);
  await page.reload();
  await expect(editor(page)).toContainText("kept = 'once there is room'");
});

test("saved code that storage cannot read is said so, and the example shown instead is not saved over it", async ({ page }) => {
  // While sessionStorage says so, the app's reads of a notebook's record fail.
  await readStorageOnPage(page);
  await page.addInitScript(() => {
    const get = IDBObjectStore.prototype.get;
    IDBObjectStore.prototype.get = function (...args: Parameters<typeof get>) {
      if (sessionStorage.getItem("kilnUnreadable") && this.name === "notebooks") throw new DOMException("The file could not be read.", "NotReadableError");
      return get.apply(this, args);
    };
  });
  await openPlayground(page);
  await setCode(page, "mine = 'kept through a failed read'");
  const stored = async () => JSON.stringify(await storedRecords(page, "notebooks"));
  await expect.poll(stored).toContain("kept through a failed read");

  await page.evaluate(() => sessionStorage.setItem("kilnUnreadable", "1"));
  await page.reload();
  await expect(page.getByRole("alert").filter({ hasText: "Your saved code could not be read" })).toContainText(
    "(NotReadableError: The file could not be read), so the example is shown",
  );
  await expect(editor(page)).not.toContainText("kept through a failed read");
  await page.waitForTimeout(1500);
  expect(await stored()).toContain("kept through a failed read");

  await page.evaluate(() => sessionStorage.removeItem("kilnUnreadable"));
  await page.reload();
  await expect(editor(page)).toContainText("mine = 'kept through a failed read'");
  await expect(page.getByRole("alert")).toHaveCount(0);
});
