// Figures taken through the Playground's interface (Chromium): a flood of prints with its
// output kept and with it dropped, a 200 MB upload, and long tasks while the spare loads.
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { TRIALS, longestTask, median, onNewDocument, openPage, playgroundReady, recordPage, sleep, spread, waitFor, waitQuiet } from "./lib.mjs";

/** A fresh context's Playground with Python ready; `outputLimitKiB` set first when given, `init` run in each document. */
async function playground(browser, origin, { outputLimitKiB, init } = {}) {
  const { page, context } = await openPage(browser);
  await onNewDocument(page, recordPage);
  if (init) await onNewDocument(page, init);
  if (outputLimitKiB) {
    // The Playground reads its settings from IndexedDB; the harness page (same origin) writes them.
    await page.goto(`${origin}/harness.html`);
    await page.evaluate(async (limit) => {
      const settings = await window.kiln.loadSettings();
      await window.kiln.saveSettings({ ...settings, outputLimitKiB: limit });
    }, outputLimitKiB);
  }
  await page.goto(`${origin}/#/playground`);
  const readyAt = await playgroundReady(page);
  return { page, context, readyAt };
}

const finishedRuns = (page) => page.evaluate(() => Number(document.querySelector("[data-finished-runs]")?.dataset.finishedRuns ?? 0));

/** Types `code` into the first cell's editor, presses its Run cell and waits for the finished-run count to go up; the Output region's text. */
export async function runInUi(page, code, timeout = 300_000) {
  const before = await finishedRuns(page);
  const cell = page.getByRole("region", { name: "Cell 1" });
  await cell.getByRole("textbox", { name: "Python code" }).fill(code);
  const start = await page.evaluate(() => performance.now());
  await cell.getByRole("button", { name: "Run cell" }).click();
  const end = await waitFor(
    page,
    `run ${before + 1} to finish`,
    (n) => (Number(document.querySelector("[data-finished-runs]")?.dataset.finishedRuns ?? 0) >= n ? performance.now() : undefined),
    before + 1,
    { timeout },
  );
  return { start, end };
}

const FLOOD = "for i in range(10**6):\n    print(i)";
const AFTER_RUN_MS = 1000;

/**
 * 10^6 prints (6.9 MB): with the output limit raised so that all of it is kept (checked),
 * and with the default limit (1 MiB), where the rest is dropped with a notice.
 */
export async function flood(browser, origin) {
  const figures = {};
  for (const [kind, limit] of [["kept", 64 * 1024], ["dropped", undefined]]) {
    const durations = [], longest = [];
    let complete = true;
    for (let i = 0; i < TRIALS; i++) {
      const { page, context } = await playground(browser, origin, { outputLimitKiB: limit });
      try {
        await waitQuiet();
        const { start, end } = await runInUi(page, FLOOD);
        durations.push(end - start);
        // Until a second after the run: the Playground saves its output when a run ends.
        await sleep(AFTER_RUN_MS);
        longest.push(await longestTask(page, start, end + AFTER_RUN_MS));
        const shown = await page.evaluate(() => {
          const text = document.querySelector("[aria-label=Output]")?.textContent ?? "";
          return { truncated: text.includes("Output truncated"), last: text.includes("999999") };
        });
        if (kind === "kept" && (shown.truncated || !shown.last)) complete = false;
        if (kind === "dropped" && !shown.truncated) throw new Error("the flood with the default limit was not truncated");
      } finally {
        await context.close();
      }
    }
    figures[kind] = { ms: median(durations), longestTaskMs: spread(longest), ...(kind === "kept" ? { complete } : {}) };
  }
  return figures;
}

/**
 * Init script: `window.__benchUploadDone` is the time at which the Files panel's progress
 * line went away after having been shown (the upload's last step), and stays set.
 */
function recordUpload() {
  let seen = false;
  // Timed from the moment the page has the file, as the floor is (not from the test driver's call).
  addEventListener("change", () => (window.__benchUploadStart ??= performance.now()), true);
  new MutationObserver(() => {
    const progress = document.querySelector(".files-progress");
    if (progress && progress.textContent.includes("Uploading")) seen = true;
    else if (seen && !progress && window.__benchUploadDone === undefined) window.__benchUploadDone = performance.now();
  }).observe(document, { subtree: true, childList: true, characterData: true });
}

const UPLOAD_BYTES = 200 * 1024 * 1024;

/** A 200 MB file through "Upload files" until it is saved and in Python; against reading it into memory. */
export async function upload(browser, origin) {
  const dir = mkdtempSync(path.join(tmpdir(), "kiln-bench-"));
  const file = path.join(dir, "big.bin");
  const fd = openSync(file, "w");
  const chunk = Buffer.alloc(8 * 1024 * 1024, 1);
  for (let i = 0; i < UPLOAD_BYTES / chunk.length; i++) writeSync(fd, chunk);
  closeSync(fd);
  const durations = [], floors = [], longest = [];
  try {
    for (let i = 0; i < TRIALS; i++) {
      const { page, context } = await playground(browser, origin, { init: recordUpload });
      try {
        await waitQuiet();
        await page.getByLabel("Choose files to upload").setInputFiles(file);
        const end = await waitFor(page, "the upload's progress line to come and go", () => window.__benchUploadDone, undefined, { timeout: 300_000, every: 100 });
        const start = await page.evaluate(() => window.__benchUploadStart);
        // In Python, whole (a run waits for the writes queued before it).
        await runInUi(page, "import os\nos.path.getsize('big.bin')");
        const size = await page.evaluate(() => document.querySelector("[aria-label=Output]")?.textContent ?? "");
        if (!size.includes(String(UPLOAD_BYTES))) throw new Error(`the uploaded file is not whole in Python: ${size.slice(0, 200)}`);
        const listed = await page.getByRole("list", { name: "Files" }).getByText("200 MiB").count();
        if (!listed) throw new Error("the uploaded file is not listed as 200 MiB");
        durations.push(end - start);
        longest.push(await longestTask(page, start, end));
        // The floor: only reading the same file into memory, nothing kept or sent anywhere.
        await page.evaluate(() => {
          const floor = document.createElement("input");
          floor.type = "file";
          floor.id = "bench-floor";
          document.body.append(floor);
        });
        await page.setInputFiles("#bench-floor", file);
        floors.push(
          await page.evaluate(async () => {
            const started = performance.now();
            await document.querySelector("#bench-floor").files[0].arrayBuffer();
            return performance.now() - started;
          }),
        );
      } finally {
        await context.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { ms: median(durations), floorMs: median(floors), longestTaskMs: spread(longest) };
}

/** Long tasks on a fresh Playground from "Python ready" until the browser is idle again (its spare loaded). */
export async function spareTasksPlayground(browser, origin) {
  const longest = [], windows = [];
  for (let i = 0; i < TRIALS; i++) {
    const { page, context, readyAt } = await playground(browser, origin);
    try {
      await waitQuiet();
      const end = await page.evaluate(() => performance.now());
      longest.push(await longestTask(page, readyAt, end));
      windows.push(end - readyAt);
    } finally {
      await context.close();
    }
  }
  return { longestTaskMs: spread(longest), windowMs: median(windows) };
}
