import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { openPlayground, output, run, startRun } from "./support/playground";

const filesList = (page: Page) => page.getByRole("list", { name: "Files" });

/** How many files the open notebook has in storage, read straight from IndexedDB. */
const storedCount = (page: Page) =>
  page.evaluate(
    (scope) =>
      new Promise<number>((resolve, reject) => {
        const open = indexedDB.open("kiln");
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const count = open.result.transaction("files").objectStore("files").index("scope").count(scope);
          count.onsuccess = () => {
            open.result.close();
            resolve(count.result);
          };
        };
      }),
    `notebook:${decodeURIComponent(new URL(page.url()).hash.replace("#/playground/", ""))}`,
  );

/**
 * From now on, the page notes each write of a record to the files store, by the transaction it
 * is in: `writesPerTransaction` gives how many records each transaction wrote, in order. Saved
 * one at a time, 10,000 files would take 10,000 transactions.
 */
const watchFileWrites = (page: Page) =>
  page.evaluate(() => {
    const win = window as unknown as { fileWrites: Map<IDBTransaction, number> };
    win.fileWrites = new Map();
    const put = IDBObjectStore.prototype.put;
    IDBObjectStore.prototype.put = function (...args: Parameters<typeof put>) {
      if (this.name === "files") win.fileWrites.set(this.transaction, (win.fileWrites.get(this.transaction) ?? 0) + 1);
      return put.apply(this, args);
    };
  });
const writesPerTransaction = (page: Page) => page.evaluate(() => [...(window as unknown as { fileWrites: Map<IDBTransaction, number> }).fileWrites.values()]);

test("Python writing 20,000 files: the first 10,000 are saved all at once and the rest named, a reload has them in Python, and many are deleted at once", async ({ page }) => {
  test.setTimeout(600_000);
  await openPlayground(page);
  await watchFileWrites(page);

  // The run really writes all 20,000: Python lists them.
  const written = await startRun(page, 'import os\nfor i in range(20000): open(f"f{i:06d}.txt", "w").write("x")\nprint("written:", len(os.listdir()))');
  await written(300_000);
  await expect(output(page)).toContainText("written: 20000");

  // What is kept stops at the limit, and the notice says which files were not kept and why.
  const notice = page.getByRole("alert");
  await expect(notice).toContainText(
    "10,000 files not saved (f010000.txt, f010001.txt, f010002.txt and 9,997 more): each conversation, and the Playground, keeps at most 10,000 files. " +
      "The files kept before are all still there. They stay in Python's folder until Python restarts.",
    { timeout: 120_000 },
  );
  await expect(page.getByText("10,000 of at most 10,000 files")).toBeVisible();
  // The list draws its rows a few hundred at a time.
  const rows = filesList(page).getByRole("listitem");
  await expect(rows).toHaveCount(200);
  await expect(rows.first()).toContainText("f000000.txt");
  await expect(rows.last()).toContainText("f000199.txt");
  // From the keyboard: in a loaded run a mouse click here was once lost (the list still 200 rows
  // 20 s later), most likely landing where the button had been while the page, busy with the
  // 10,000 files, still laid itself out; a key goes to the focused button wherever it is.
  await page.getByRole("button", { name: "Show more files (9,800 not shown)" }).press("Enter");
  await expect(rows).toHaveCount(400);
  await expect(rows.last()).toContainText("f000399.txt");
  expect(await storedCount(page)).toBe(10_000);
  // Saved in one batch: all 10,000 records were written in one transaction, so they appeared at once.
  expect(await writesPerTransaction(page)).toEqual([10_000]);
  // Those not kept are still in Python's folder, as the notice says.
  await run(page, "import os\nprint('still in Python:', os.path.exists('f019999.txt'))");
  await expect(output(page)).toContainText("still in Python: True");

  // After a reload, Python starts with the kept files, and only them.
  await page.reload();
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 120_000 });
  await expect(page.getByText("10,000 of at most 10,000 files")).toBeVisible();
  await run(page, "import os\nnames = sorted(os.listdir())\nprint(len(names), names[0], names[-1], open('f009999.txt').read(), os.path.exists('f010000.txt'))");
  await expect(output(page)).toContainText("10000 f000000.txt f009999.txt x False");

  // At the limit, an upload is refused in words, and nothing kept goes.
  const chooser = page.waitForEvent("filechooser");
  await page.getByRole("button", { name: "Upload files" }).click();
  await (await chooser).setFiles([{ name: "one more.txt", mimeType: "text/plain", buffer: Buffer.from("more") }]);
  await expect(notice).toContainText("1 file not uploaded (one more.txt): each conversation, and the Playground, keeps at most 10,000 files.");
  await expect(page.getByText("10,000 of at most 10,000 files")).toBeVisible();
  await expect(filesList(page)).not.toContainText("one more.txt");

  // Many at once: select all, leave two out, and one Delete (asked first) removes the 9,998 others.
  const selectAll = page.getByRole("checkbox", { name: "Select all files" });
  await selectAll.check();
  await expect(page.getByText("10,000 of 10,000 selected")).toBeVisible();
  await expect(page.getByRole("checkbox", { name: "Select f000150.txt" })).toBeChecked();
  await page.getByRole("checkbox", { name: "Select f000000.txt" }).uncheck();
  await page.getByRole("checkbox", { name: "Select f000001.txt" }).uncheck();
  await expect(selectAll).not.toBeChecked();
  await expect(page.getByText("9,998 of 10,000 selected")).toBeVisible();
  const deleteSelected = page.getByRole("button", { name: "Delete selected files" });
  const confirmation = page.getByRole("group", { name: "Delete 9,998 selected files?" });
  await deleteSelected.click();
  await expect(confirmation).toHaveAccessibleDescription("Delete these 9,998 files? Python no longer sees them, and it cannot be undone.");
  // Cancel keeps them all, and the selection.
  await confirmation.getByRole("button", { name: "Cancel" }).click();
  await expect(confirmation).toHaveCount(0);
  await expect(deleteSelected).toBeFocused();
  await expect(page.getByText("10,000 of at most 10,000 files")).toBeVisible();
  await expect(page.getByText("9,998 of 10,000 selected")).toBeVisible();
  await deleteSelected.click();
  await confirmation.getByRole("button", { name: "Delete", exact: true }).click();
  await expect(rows).toHaveText([/f000000\.txt/, /f000001\.txt/], { timeout: 60_000 });
  await expect(page.getByText("2 of at most 10,000 files")).toBeVisible();
  await expect(page.getByRole("button", { name: "Upload files" })).toBeFocused();
  await expect.poll(() => storedCount(page), { timeout: 60_000 }).toBe(2);
  await run(page, "import os\nprint('left:', sorted(os.listdir()))");
  await expect(output(page)).toContainText("left: ['f000000.txt', 'f000001.txt']");
  // Only those two come back after a reload.
  await page.reload();
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 120_000 });
  await run(page, "import os\nprint('after reload:', sorted(os.listdir()))");
  await expect(output(page)).toContainText("after reload: ['f000000.txt', 'f000001.txt']");
});
