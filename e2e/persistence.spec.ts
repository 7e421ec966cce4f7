import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { editor, openPlayground, output, run } from "./support/playground";

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
function savedParts(page: Page): Promise<{ parts: number; records: number }> {
  return page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open("kiln");
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const store = open.result.transaction("playground").objectStore("playground");
          const record = store.get("current");
          const count = store.count();
          count.onsuccess = () => resolve({ parts: (record.result as { parts?: number } | undefined)?.parts ?? -1, records: count.result });
        };
      }),
  );
}

test("a megabyte of output survives a reload whole, and the next run's output replaces all of it", async ({ page }) => {
  await openPlayground(page);
  // Past the default limit of 1 MiB: kept up to it, with the notice.
  await run(page, 'for i in range(200_000):\n    print(f"line {i:06d}")');
  await expect(output(page)).toContainText("Output truncated");
  const shown = (await output(page).textContent()) ?? "";
  expect(shown.length).toBeGreaterThan(1_000_000);
  // Saved in several parts of at most 256 Ki characters, beside the record of the code.
  await expect(async () => {
    const { parts, records } = await savedParts(page);
    expect(parts).toBeGreaterThanOrEqual(4);
    expect(records).toBe(parts + 1);
  }).toPass();
  await page.reload();
  await expect(output(page)).toContainText("Output truncated");
  expect(await output(page).textContent()).toBe(shown);

  await run(page, 'print("short")');
  await expect(output(page)).toHaveText("short");
  await expect.poll(() => savedParts(page)).toEqual({ parts: 1, records: 2 });
  await page.reload();
  await expect(output(page)).toHaveText("short");
});
