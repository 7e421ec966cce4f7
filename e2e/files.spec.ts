import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { FileChooser, Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { launchOwnChromium } from "./support/chromium";
import { openPlayground, output, run, startRun } from "./support/playground";

const filesList = (page: Page) => page.getByRole("list", { name: "Files" });

async function upload(page: Page, files: Parameters<FileChooser["setFiles"]>[0]) {
  const chooser = page.waitForEvent("filechooser");
  await page.getByRole("button", { name: "Upload files" }).click();
  await (await chooser).setFiles(files);
}

test("an uploaded CSV is read by Python, a result file is downloaded, a deleted file is gone, and it all survives a reload", async ({ page }) => {
  await openPlayground(page);
  const csv = "city,temp\nOslo,4\nLima,19\nCairo,27\n";
  await upload(page, [{ name: "weather data.csv", mimeType: "text/csv", buffer: Buffer.from(csv) }]);
  await expect(filesList(page).getByRole("listitem").filter({ hasText: "weather data.csv" })).toContainText("34 bytes");

  await run(
    page,
    [
      "import csv",
      "rows = list(csv.DictReader(open('weather data.csv')))",
      "mean = sum(int(r['temp']) for r in rows) / len(rows)",
      "open('summary.txt', 'w').write(f'mean temp {mean:.1f}\\n')",
      "print(len(rows), 'rows')",
    ].join("\n"),
  );
  await expect(output(page)).toContainText("3 rows");
  // Files that Python creates appear without a manual refresh.
  const summary = filesList(page).getByRole("listitem").filter({ hasText: "summary.txt" });
  await expect(summary).toBeVisible();

  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Download summary.txt" }).click();
  const saved = await (await download).path();
  expect(readFileSync(saved, "utf8")).toBe("mean temp 16.7\n");

  // Deleting removes a file from the list and from Python's working directory.
  await upload(page, [{ name: "gone.txt", mimeType: "text/plain", buffer: Buffer.from("x") }]);
  await expect(filesList(page).getByRole("listitem")).toHaveCount(3);
  // A Delete asks first, in the file's row: Escape keeps it, and focus goes back to its Delete button.
  const deleteButton = page.getByRole("button", { name: "Delete gone.txt" });
  const confirmation = page.getByRole("group", { name: "Delete gone.txt?" });
  await deleteButton.click();
  await expect(confirmation).toHaveAccessibleDescription("Delete gone.txt? Python no longer sees it, and it cannot be undone.");
  await expect(confirmation.getByRole("button", { name: "Cancel" })).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(confirmation).toHaveCount(0);
  await expect(deleteButton).toBeFocused();
  await expect(filesList(page).getByRole("listitem")).toHaveCount(3);
  await deleteButton.click();
  await confirmation.getByRole("button", { name: "Delete", exact: true }).click();
  await expect(filesList(page).getByRole("listitem")).toHaveCount(2);
  await expect(page.getByRole("button", { name: "Upload files" })).toBeFocused();

  await page.reload();
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await expect(filesList(page).getByRole("listitem")).toHaveCount(2);
  await run(page, "import os\nprint(open('weather data.csv').read().splitlines()[2], open('summary.txt').read().strip(), os.path.exists('gone.txt'))");
  await expect(output(page)).toContainText("Lima,19 mean temp 16.7 False");
});

/** Open the notebook `page` has open in a second tab, which follows it read-only. */
async function secondTab(page: Page): Promise<Page> {
  const other = await page.context().newPage();
  await other.goto(page.url());
  await expect(other.getByRole("status")).toContainText("Python runs in the tab that edits this notebook", { timeout: 30_000 });
  return other;
}

/** `tab` takes the notebook over, and its Python is ready. */
async function useHere(tab: Page): Promise<void> {
  await tab.getByRole("button", { name: "Use it here" }).click();
  await expect(tab.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
}

test("two tabs of one notebook share its files: an upload, a file Python wrote and a delete in one reach the other's list and Python", async ({ page }) => {
  await openPlayground(page);
  const other = await secondTab(page);
  await upload(page, [{ name: "shared.csv", mimeType: "text/csv", buffer: Buffer.from("a,b\n1,2\n") }]);
  await expect(filesList(other).getByRole("listitem").filter({ hasText: "shared.csv" })).toContainText("8 bytes");
  await useHere(other);
  await run(other, "print('row:', open('shared.csv').read().split()[1])\nopen('made.txt', 'w').write('made in the other tab')");
  await expect(output(other)).toContainText("row: 1,2");
  await expect(filesList(page).getByRole("listitem").filter({ hasText: "made.txt" })).toBeVisible();
  await useHere(page);
  await run(page, "print(open('made.txt').read())");
  await expect(output(page)).toContainText("made in the other tab");

  await page.getByRole("button", { name: "Delete shared.csv" }).click();
  await page.getByRole("group", { name: "Delete shared.csv?" }).getByRole("button", { name: "Delete", exact: true }).click();
  await expect(filesList(other).getByRole("listitem").filter({ hasText: "shared.csv" })).toHaveCount(0);
  await useHere(other);
  await run(other, "import os\nprint('still there:', os.path.exists('shared.csv'), os.path.exists('made.txt'))");
  await expect(output(other)).toContainText("still there: False True");
  // Nothing went back and forth: each tab lists the two tabs' one file left.
  await expect(filesList(page).getByRole("listitem")).toHaveCount(1);
  await expect(filesList(other).getByRole("listitem")).toHaveCount(1);
  await other.close();
});

test("a file the other tab saves during a run is not put in under it: uploads here still go on, and what the run wrote is kept in both tabs", async ({ page }) => {
  await openPlayground(page);
  const other = await secondTab(page);
  const finished = await startRun(page, "open('out.txt', 'w').write('from this run')\nimport time\ntime.sleep(8)\nprint('during the run:', open('out.txt').read())");
  await expect(page.getByRole("status")).toContainText("Running");
  // The tab that follows the notebook read-only still keeps files for it.
  await upload(other, [{ name: "out.txt", mimeType: "text/plain", buffer: Buffer.from("uploaded in the other tab") }]);
  await expect(filesList(page).getByRole("listitem").filter({ hasText: "out.txt" })).toContainText("25 bytes");
  // An upload here during the run is saved and listed at once, not held up by the other tab's file.
  await upload(page, [{ name: "mine.txt", mimeType: "text/plain", buffer: Buffer.from("mine") }]);
  await expect(filesList(page).getByRole("listitem").filter({ hasText: "mine.txt" })).toBeVisible();
  await expect(page.getByRole("status")).toContainText("Running");
  await finished();
  await expect(output(page)).toContainText("during the run: from this run");
  // The run ended after the upload: what it wrote is the file, in both tabs' lists and Pythons.
  await expect(filesList(other).getByRole("listitem").filter({ hasText: "out.txt" })).toContainText("13 bytes");
  await run(page, "print('now:', open('out.txt').read(), open('mine.txt').read())");
  await expect(output(page)).toContainText("now: from this run mine");
  await useHere(other);
  await run(other, "print('now:', open('out.txt').read(), open('mine.txt').read())");
  await expect(output(other)).toContainText("now: from this run mine");
  await other.close();
});

test("file names with spaces, Unicode and path tricks stay inside the working directory", async ({ page }) => {
  await openPlayground(page);
  await upload(page, [
    { name: "../escape.txt", mimeType: "text/plain", buffer: Buffer.from("one") },
    { name: "résumé été ☀.txt", mimeType: "text/plain", buffer: Buffer.from("two") },
  ]);
  await expect(filesList(page).getByRole("listitem")).toHaveCount(2);
  await run(page, "import os\nprint(sorted(os.listdir('.')), os.path.exists('/home/escape.txt'))");
  await expect(output(page)).toContainText("['escape.txt', 'résumé été ☀.txt'] False");
});

test("links in Python's folder are not followed: one to nowhere, a loop and one to a system folder leave the files saved as before", async ({ page }) => {
  await openPlayground(page);
  await run(
    page,
    "import os\nos.symlink('/nowhere', 'dangling')\nos.symlink('.', 'loop')\nos.symlink('/lib', 'system')\n" +
      "open('kept.txt', 'w').write('kept')\nprint(os.path.islink('dangling'), os.path.islink('loop'), os.path.islink('system'))",
  );
  // The links are there, in Python's folder.
  await expect(output(page)).toHaveText("True True True");
  const files = filesList(page);
  await expect(files).toContainText("kept.txt");
  await expect(files.getByRole("listitem")).toHaveCount(1);
  await expect(page.getByRole("alert")).toHaveCount(0);
  // Saving still works after them: a file written by the next run is listed too.
  await run(page, "open('later.txt', 'w').write('later')");
  await expect(files.getByRole("listitem")).toHaveCount(2);
  await expect(files).toContainText("later.txt");
});

test("a file over the storage quota is reported, and the files already saved are kept", async () => {
  // A real full disk: the browser's profile on a small tmpfs (the suite runs as root), so
  // the browser itself runs out of room for a 40 MiB file.
  const disk = mkdtempSync(path.join(tmpdir(), "kiln-small-disk-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=40m", "tmpfs", disk]);
  const { context, page } = await launchOwnChromium(disk);
  try {
    await openPlayground(page);
    await upload(page, [{ name: "small.txt", mimeType: "text/plain", buffer: Buffer.from("keep me") }]);
    await expect(filesList(page).getByRole("listitem")).toHaveCount(1);
    // From a file on disk: handed over as a buffer, 40 MiB takes Playwright about 25 s here.
    const big = test.info().outputPath("big.bin");
    writeFileSync(big, Buffer.alloc(40 * 1024 * 1024, 7));
    await upload(page, big);
    await expect(page.getByRole("alert")).toContainText("Not enough browser storage to keep big.bin. Your other files are safe");
    await expect(filesList(page).getByRole("listitem")).toHaveCount(1);
    await page.reload();
    await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
    await expect(filesList(page).getByRole("listitem")).toHaveText([/small\.txt/]);
    await run(page, "print(open('small.txt').read())");
    await expect(output(page)).toContainText("keep me");
  } finally {
    await context.close();
    execFileSync("umount", [disk]);
    rmSync(disk, { recursive: true, force: true });
  }
});

test("a 200 MB file goes in with progress and arrives whole", async ({ page }, testInfo) => {
  const big = testInfo.outputPath("big data.bin");
  const size = 200 * 1024 * 1024;
  const fd = openSync(big, "w");
  const chunk = Buffer.alloc(8 * 1024 * 1024);
  for (let i = 0; i < size / chunk.length; i++) writeSync(fd, chunk.fill(i % 251));
  closeSync(fd);
  await openPlayground(page);
  await upload(page, big);
  await expect(page.getByText("Uploading big data.bin (200 MiB)…")).toBeVisible();
  await expect(filesList(page).getByRole("listitem")).toContainText("200 MiB", { timeout: 120_000 });
  await expect(page.getByText(/Uploading/)).toHaveCount(0, { timeout: 120_000 });
  await run(page, "import os\nf = open('big data.bin', 'rb'); f.seek(-1, 2)\nprint(os.path.getsize('big data.bin'), f.read()[0])");
  await expect(output(page)).toContainText(`${size} ${(size / chunk.length - 1) % 251}`);
});

test("a huge file that Python writes is not saved and says so; the other files are, and it stays in Python", async ({ page }) => {
  test.setTimeout(120_000);
  await openPlayground(page);
  // 600 MiB of zeros: read into the page and stored whole, it held the page for seconds.
  await run(page, "open('huge.bin', 'wb').truncate(600 * 2**20)\nopen('small.txt', 'w').write('kept')");
  const files = filesList(page);
  await expect(page.getByRole("alert")).toContainText(
    "huge.bin (600 MiB) is not saved: Kiln saves the files Python writes up to 256 MiB. It stays in Python's folder until Python restarts.",
  );
  await expect(files).toContainText("small.txt");
  await expect(files).not.toContainText("huge.bin");
  // Still in Python's folder.
  await run(page, "import os; os.path.getsize('huge.bin')");
  await expect(output(page)).toHaveText(String(600 * 2 ** 20));
  await run(page, "import os; os.remove('huge.bin')");
});
