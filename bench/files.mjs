// "Python ready" on the Playground with 10,000 small files stored (the most a scope keeps),
// against the same page with none, in the same browser context: every stored file is put into
// each new worker before Python counts as ready.
import { TRIALS, median, onNewDocument, openPage, playgroundReady, recordPage, waitFor, waitQuiet } from "./lib.mjs";
import { runInUi } from "./ui.mjs";

export const MANY_FILES = 10_000;

/** From the harness page (nothing started there) to the Playground: ms from navigation to "Python ready". */
async function visit(page, origin) {
  await page.goto(`${origin}/harness.html`);
  await page.goto(`${origin}/#/playground`);
  const ready = await playgroundReady(page);
  // Its spare loaded and anything it stores stored, before the next visit.
  await waitQuiet();
  return ready;
}

/** Stores `count` small files for the notebook `id` as a run would have left them (or deletes them all, with 0). */
async function setFiles(page, origin, id, count) {
  await page.goto(`${origin}/harness.html`);
  await page.evaluate(async ([id, count]) => {
    const scope = window.kiln.notebookScope(id);
    const kept = await window.kiln.readStoredFiles(scope);
    await window.kiln.deleteStoredFiles(scope, kept.map((file) => file.path));
    const now = Date.now();
    const files = Array.from({ length: count }, (_, i) => {
      const data = new TextEncoder().encode(`file ${i}\n`).buffer;
      return { scope, path: `f${String(i).padStart(6, "0")}.txt`, data, size: data.byteLength, modifiedAt: now };
    });
    await window.kiln.storeFiles(files);
  }, [id, count]);
}

export async function manyFiles(browser, origin) {
  const none = [], many = [];
  for (let i = 0; i < TRIALS; i++) {
    const { page, context } = await openPage(browser);
    try {
      await onNewDocument(page, recordPage);
      // The first visit fills the HTTP cache and stores the start-up snapshot: both kinds are repeat visits.
      await visit(page, origin);
      // The notebook the Playground opened (and opens again on each visit): its files are set.
      const id = decodeURIComponent((await page.evaluate(() => location.hash)).replace("#/playground/", ""));
      // A different order each trial, so neither always goes first.
      for (const kind of i % 2 ? ["many", "none"] : ["none", "many"]) {
        await setFiles(page, origin, id, kind === "many" ? MANY_FILES : 0);
        (kind === "many" ? many : none).push(await visit(page, origin));
        if (kind === "many") {
          await waitFor(page, "the Files panel to count the files", () => document.querySelector(".files-total")?.textContent?.startsWith("10,000 of"));
          await runInUi(page, "import os\nlen([n for n in os.listdir() if n.endswith('.txt')])");
          const shown = await page.evaluate(() => document.querySelector("[aria-label='Cell 1'] [aria-label=Output]")?.textContent ?? "");
          if (!shown.includes(String(MANY_FILES))) throw new Error(`Python does not have the ${MANY_FILES} files: ${shown.slice(0, 200)}`);
        }
      }
    } finally {
      await context.close();
    }
  }
  const differences = many.map((ms, i) => ms - none[i]);
  return { none: median(none), many: median(many), differenceMs: median(differences), files: MANY_FILES, trials: { none, many, differences } };
}
