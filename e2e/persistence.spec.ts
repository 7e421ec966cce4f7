import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { fillDisk, leavingAsksFirst, readStorageOnPage, setDiskFull, storedRecords } from "./support/stored";
import { editor, openPlayground, output, run, setCode, startRun } from "./support/playground";

test("the Playground's code and output survive a reload", async ({ page }) => {
  await openPlayground(page);
  const code = 'print("kept across reloads")\n21 * 2';
  await run(page, code);
  await expect(output(page)).toHaveText("kept across reloads\n42");
  // Stored (the code's record and one part of output) before the reload.
  await expect.poll(() => savedParts(page)).toEqual({ parts: 1, records: 2 });
  await page.reload();
  await expect(editor(page)).toContainText('print("kept across reloads")');
  await expect(output(page)).toHaveText("kept across reloads\n42");
  await expect(page.getByRole("status")).toContainText(/Python ready · Python 3\.\d+\.\d+ · Pyodide 314\.0\.\d+/, {
    timeout: 90_000,
  });
});

/** How many parts the Playground's saved output is in, and how many records its store holds. */
async function savedParts(page: Page): Promise<{ parts: number; records: number }> {
  const records = await storedRecords<{ parts?: number }>(page, "playground");
  return { parts: records.find((record) => record.parts !== undefined)?.parts ?? -1, records: records.length };
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
  await fillDisk(page, { playground: true });
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
  // While sessionStorage says so, the app's reads of the Playground's record fail.
  await readStorageOnPage(page);
  await page.addInitScript(() => {
    const get = IDBObjectStore.prototype.get;
    IDBObjectStore.prototype.get = function (...args: Parameters<typeof get>) {
      if (sessionStorage.getItem("kilnUnreadable") && this.name === "playground") throw new DOMException("The file could not be read.", "NotReadableError");
      return get.apply(this, args);
    };
  });
  await openPlayground(page);
  await setCode(page, "mine = 'kept through a failed read'");
  const stored = async () => JSON.stringify(await storedRecords(page, "playground"));
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

test("two Playground tabs show the code either saved; an edit not saved yet is not replaced, and each keeps its own output", async ({ page }) => {
  await openPlayground(page);
  const other = await page.context().newPage();
  await openPlayground(other);
  await run(page, 'print("first tab ran")');
  await expect(editor(other)).toContainText('print("first tab ran")');
  // The other tab's output is its own: it ran nothing.
  await expect(output(other)).not.toContainText("first tab ran");

  await setCode(other, "from_the_other_tab = 2");
  await expect(editor(page)).toContainText("from_the_other_tab = 2");

  // An edit of this tab's own that is not saved yet (storage refuses it) is not replaced by the other tab's save.
  await fillDisk(page, { playground: true });
  await setCode(page, "mine = 'not saved yet'");
  await expect(page.getByRole("alert").filter({ hasText: "Your code could not be saved" })).toBeVisible();
  await setCode(other, "theirs = 'saved'");
  await expect(page.getByRole("alert").filter({ hasText: "Your code could not be saved" })).toBeVisible();
  await other.waitForTimeout(1500);
  await expect(editor(page)).toContainText("mine = 'not saved yet'");
  // Saved at last: the other tab follows it, and a reload of either shows it.
  await setDiskFull(page, false);
  await setCode(page, "mine = 'saved now'");
  await expect(editor(other)).toContainText("mine = 'saved now'");
  await other.reload();
  await expect(editor(other)).toContainText("mine = 'saved now'");
  await other.close();
});
