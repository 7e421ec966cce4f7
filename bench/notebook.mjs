// A big notebook in the Playground (Chromium): a 500-cell notebook opened, typed in and
// scrolled, against a 1-cell notebook in the same run. Each notebook is stored through the
// harness page (same origin, same IndexedDB) as the Playground keeps them, then opened by its URL.
import { TRIALS, longestTask, median, onNewDocument, openPage, recordPage, spread, waitFor, waitQuiet } from "./lib.mjs";

export const BIG_NOTEBOOK_CELLS = 500;
const TYPED = "total = sum(range(10))  # typed";

/**
 * Records when the notebook was first ready for typing (Cell 1's editor made and editable, so a
 * key pressed lands in it) and when its last cell was shown (cells after the first screenful are
 * added in slices that yield to typing and scrolling).
 */
function recordNotebook(cells) {
  const check = () => {
    const first = document.querySelector('[aria-label="Cell 1"] .cm-content[contenteditable="true"]');
    if (first && window.__notebookReady === undefined) window.__notebookReady = performance.now();
    if (document.querySelector(`[aria-label="Cell ${cells}"]`) && window.__notebookShown === undefined) window.__notebookShown = performance.now();
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["contenteditable"] });
}

const now = (page) => page.evaluate(() => performance.now());

/** Stores a notebook of `cells` code cells (each a few lines, with a line of output), and resolves with its id. */
async function storeNotebook(page, origin, cells) {
  await page.goto(`${origin}/harness.html`);
  return page.evaluate(async (cells) => {
    const { addNotebook, newCell, newNotebook } = window.kiln;
    const made = Array.from({ length: cells }, (_, i) => {
      const cell = newCell(i % 5 === 4 ? "markdown" : "code", i % 5 === 4 ? `## Step ${i}\n\nWhat the cells above found, in words.` : `# cell ${i}\nvalues = [n * ${i} for n in range(10)]\nprint(sum(values))\nvalues[-1]`);
      if (cell.kind === "code") {
        cell.outputs = [{ kind: "stream", name: "stdout", text: `${45 * i}\n` }, { kind: "value", data: { "text/plain": String(9 * i) } }];
        cell.executionCount = i + 1;
      }
      return cell;
    });
    const notebook = newNotebook(`${cells} cells`, made);
    await addNotebook(notebook);
    return notebook.id;
  }, cells);
}

/** One trial on one notebook: open (ready for typing, then every cell shown), type in a cell in the middle, scroll top to bottom. */
async function trial(browser, origin, cells) {
  const { page, context } = await openPage(browser);
  try {
    const id = await storeNotebook(page, origin, cells);
    await onNewDocument(page, recordPage);
    await onNewDocument(page, recordNotebook, cells);
    // A first visit warms the HTTP cache and the start-up snapshot, as a person's second visit finds them.
    await page.goto(`${origin}/#/playground/${id}`);
    await waitFor(page, "the notebook to open", () => window.__notebookShown && window.__notebookReady);
    await waitQuiet();
    await page.goto(`${origin}/harness.html`);
    await page.goto(`${origin}/#/playground/${id}`);
    const readyMs = await waitFor(page, "the notebook to be ready for typing", () => window.__notebookReady);
    const shownMs = await waitFor(page, "the notebook's last cell", () => window.__notebookShown);
    // Until a second after its last cell was shown: what opening still does then counts too.
    await page.waitForTimeout(1000);
    const openTask = await longestTask(page, 0, shownMs + 1000);

    // Typing in the middle cell (its editor made as it comes into view).
    const middle = page.getByRole("region", { name: `Cell ${Math.ceil(cells / 2) - (Math.ceil(cells / 2) % 5 === 0 ? 1 : 0)}` });
    await middle.scrollIntoViewIfNeeded();
    const box = middle.getByRole("textbox", { name: "Python code" });
    await box.click();
    await page.keyboard.press("End");
    const typeFrom = await now(page);
    await page.keyboard.type(TYPED, { delay: 20 });
    const typeTo = await now(page);
    await waitFor(page, "the typed text to show", (text) => [...document.querySelectorAll(".cm-content")].some((el) => el.textContent.includes(text)), TYPED);
    const typeTask = await longestTask(page, typeFrom, typeTo + 200);

    // Scrolling from the top to the bottom, a screen at a time.
    const scrollFrom = await now(page);
    await page.evaluate(async () => {
      const scroller = [...document.querySelectorAll("*")].find((el) => el.scrollHeight > el.clientHeight + 10 && /(auto|scroll)/.test(getComputedStyle(el).overflowY)) ?? document.scrollingElement;
      scroller.scrollTop = 0;
      for (let top = 0; top < scroller.scrollHeight; top += scroller.clientHeight) {
        scroller.scrollTop = top;
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    });
    const scrollTo = await now(page);
    const scrollTask = await longestTask(page, scrollFrom, scrollTo + 200);
    return { readyMs, shownMs, openTask, typeTask, scrollTask };
  } finally {
    await context.close();
  }
}

/** The rows: the 500-cell notebook beside the 1-cell one, each figure the median of the trials (long tasks with their maximum). */
export async function bigNotebook(browser, origin) {
  const figures = {};
  for (const cells of [1, BIG_NOTEBOOK_CELLS]) {
    const trials = [];
    for (let i = 0; i < TRIALS; i++) trials.push(await trial(browser, origin, cells));
    figures[cells === 1 ? "one" : "big"] = {
      readyMs: median(trials.map((t) => t.readyMs)),
      shownMs: median(trials.map((t) => t.shownMs)),
      openTask: spread(trials.map((t) => t.openTask)),
      typeTask: spread(trials.map((t) => t.typeTask)),
      scrollTask: spread(trials.map((t) => t.scrollTask)),
    };
  }
  return { cells: BIG_NOTEBOOK_CELLS, ...figures };
}
