// Cells in a page (`embed.js`), each figure beside its baseline in the same run:
// - a page of 20 cells on a host of another site: the Python workers before any Run (from the
//   browser's own list), and the host page's longest main-thread task while the cells are made;
// - the 20 cells run one after the other in their one session: the browser's memory (PSS)
//   against a page of 1 cell run, each in a newly launched browser; the host's longest task;
// - from pressing Run to the output on a page of 1 cell, first visit (fresh context, cold HTTP
//   cache) and repeat visit (the same context reloaded), against a bare loadPyodide() in a
//   worker followed by the same run, on the same kind of host page.
// First visits are on a host of another site (127.0.0.1), as a course site is. A frame of
// another site gets no storage in a fresh Playwright context, so repeat visits are on a host of
// Kiln's own site (localhost, another port), whose frames keep Kiln's stored start-up snapshot
// as a reader's browser keeps it for a course site.
import { createServer } from "node:http";
import { TRIALS, browserPssKiB, median, onNewDocument, openPage, recordPage, sleep, spread, waitFor, waitQuiet } from "./lib.mjs";

export const CELLS = 20;
/** The run timed on both sides: its output is what the stopwatch waits for. */
const RUN = "print('hello from the page')";
const EXPECTED = "hello from the page";

const cellsPage = (kiln, n) => `<!doctype html><meta charset="utf-8"><title>Cells</title>
<body>
${Array.from({ length: n }, (_, i) => `<pre class="kiln">${i === 0 ? RUN : `v${i} = [${i}] * 1000\nprint(${i}, len(v${i}))`}</pre>`).join("\n")}
<script>
window.__shown = new Set(); window.__shownAt = undefined;
addEventListener("message", (event) => {
  if (event.origin !== ${JSON.stringify(kiln)} || event.data?.kiln !== 1 || event.data.type !== "resize") return;
  window.__shown.add(event.source);
  if (window.__shown.size === ${n} && window.__shownAt === undefined) window.__shownAt = performance.now();
});
</script>
<script type="module" src="${kiln}/embed.js"></script>`;

/** `window.__run()`: a worker that loads Pyodide, runs the same code and posts its output; resolves with the ms from the call. */
const barePage = (kiln) => `<!doctype html><meta charset="utf-8"><title>Bare</title>
<body><pre>${RUN}</pre><script>
const index = ${JSON.stringify(`${kiln}/pyodide/`)};
const source = "const { loadPyodide } = await import(" + JSON.stringify(index + "pyodide.mjs") + ");" +
  "const pyodide = await loadPyodide({ indexURL: " + JSON.stringify(index) + ", stdLibURL: " + JSON.stringify(index + "stock/python_stdlib.zip") + " });" +
  "let out = ''; pyodide.setStdout({ batched: (text) => (out += text + '\\\\n') });" +
  "pyodide.runPython(" + JSON.stringify(${JSON.stringify(RUN)}) + "); postMessage(out);";
window.__run = () => new Promise((resolve, reject) => {
  const started = performance.now();
  const worker = new Worker("data:text/javascript," + encodeURIComponent(source), { type: "module" });
  worker.onmessage = (event) => {
    if (!String(event.data).includes(${JSON.stringify(EXPECTED)})) reject(new Error("the bare run printed " + JSON.stringify(event.data)));
    else resolve(performance.now() - started);
  };
  worker.onerror = (event) => reject(new Error(event.message || "the bare worker failed"));
});
</script>`;

function hostServer(kiln) {
  const server = createServer((request, response) => {
    const url = new URL(request.url, "http://127.0.0.1");
    const n = Number(url.searchParams.get("cells") ?? 1);
    const page = url.pathname === "/cells" ? cellsPage(kiln, n) : url.pathname === "/bare" ? barePage(kiln) : null;
    response.writeHead(page ? 200 : 404, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
    response.end(page ?? "");
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const port = server.address().port;
      resolve({ otherSite: `http://127.0.0.1:${port}`, sameSite: `http://localhost:${port}`, close: () => new Promise((done) => server.close(done)) });
    });
  });
}

const allShown = (page, n) => waitFor(page, `${n} cells to be shown`, () => window.__shownAt, undefined, { timeout: 120_000 });

/** Cell `i` (0-based)'s frame, once the page made it. */
async function cellFrame(page, i) {
  const handle = await page.waitForSelector(`iframe[title="Python cell ${i + 1}"]`, { state: "attached" });
  return handle.contentFrame();
}

/** Presses Run in a cell (in its frame, as a click does) and returns the ms until `expected` is in its output. */
function pressRun(frame, expected) {
  return frame.evaluate(
    (expected) =>
      new Promise((resolve, reject) => {
        const out = document.querySelector("[aria-label=Output]");
        const button = [...document.querySelectorAll("button")].find((b) => b.textContent.trim() === "Run");
        if (!out || !button || button.disabled) return reject(new Error("the cell has no enabled Run button"));
        const started = performance.now();
        const seen = () => {
          if (!out.textContent.includes(expected)) return;
          observer.disconnect();
          resolve(performance.now() - started);
        };
        const observer = new MutationObserver(seen);
        observer.observe(out, { subtree: true, childList: true, characterData: true });
        button.click();
      }),
    expected,
  );
}

/** The host page's longest main-thread task (0 when none passed 50 ms) that started after `from` (ms since navigation). */
const longest = (page, from = 0) => page.evaluate((from) => Math.max(0, ...window.__benchTasks.filter((task) => task.start >= from).map((task) => task.duration)), from);

/** A page of 20 cells on another site: workers before any Run, and the host's longest task while the cells are made. */
async function beforeRun(browser, host) {
  const { page, context } = await openPage(browser);
  try {
    const workers = [];
    page.on("worker", (worker) => workers.push(worker.url()));
    await onNewDocument(page, recordPage);
    await page.goto(`${host.otherSite}/cells?cells=${CELLS}`);
    const shownMs = await allShown(page, CELLS);
    // Time for anything that would start on its own.
    await sleep(3000);
    return { shownMs, workers: workers.length, longestTaskMs: await longest(page) };
  } finally {
    await context.close();
  }
}

/** A 1-cell page on `origin`, from pressing Run to the output: first visit, and (with `repeat`) the same context reloaded; the host's longest task after Run. */
async function cellVisits(browser, origin, { repeat = false } = {}) {
  const { page, context } = await openPage(browser);
  const visit = async () => pressRun(await cellFrame(page, 0), EXPECTED);
  try {
    await onNewDocument(page, recordPage);
    await page.goto(`${origin}/cells?cells=1`);
    await allShown(page, 1);
    const pressed = await page.evaluate(() => performance.now());
    const result = { first: await visit(), longestTaskMs: await longest(page, pressed) };
    if (!repeat) return result;
    await waitQuiet(); // a warm spare, a snapshot stored
    await page.reload();
    await allShown(page, 1);
    const pressedAgain = await page.evaluate(() => performance.now());
    result.repeat = await visit();
    result.longestTaskMs = Math.max(result.longestTaskMs, await longest(page, pressedAgain));
    return result;
  } finally {
    await context.close();
  }
}

async function bareVisits(browser, origin) {
  const { page, context } = await openPage(browser);
  try {
    await page.goto(`${origin}/bare`);
    const first = await page.evaluate(() => window.__run());
    await waitQuiet();
    await page.reload();
    const repeat = await page.evaluate(() => window.__run());
    return { first, repeat };
  } finally {
    await context.close();
  }
}

/** In a newly launched browser: a page of `n` cells, each run in turn; PSS (KiB) once idle, and the host's longest task from the first Run on. */
async function runAll(launch, host, n) {
  const browser = await launch();
  try {
    const { page } = await openPage(browser);
    await onNewDocument(page, recordPage);
    await page.goto(`${host.otherSite}/cells?cells=${n}`);
    await allShown(page, n);
    const pressed = await page.evaluate(() => performance.now());
    for (let i = 0; i < n; i++) await pressRun(await cellFrame(page, i), i === 0 ? EXPECTED : `${i} 1000`);
    await waitQuiet();
    await sleep(500);
    return { pssKiB: browserPssKiB(), longestTaskMs: await longest(page, pressed) };
  } finally {
    await browser.close();
  }
}

export async function cellsPageBench(browser, launch, kiln) {
  const host = await hostServer(kiln);
  const trials = { before: [], cells: [], cellsOtherSite: [], bare: [], bareOtherSite: [], one: [], all: [] };
  try {
    for (let i = 0; i < TRIALS; i++) {
      trials.before.push(await beforeRun(browser, host));
      // Kiln and its baseline in turn, a different one first each trial.
      const pair = [
        async () => {
          trials.cells.push(await cellVisits(browser, host.sameSite, { repeat: true }));
          trials.cellsOtherSite.push(await cellVisits(browser, host.otherSite));
        },
        async () => {
          trials.bare.push(await bareVisits(browser, host.sameSite));
          trials.bareOtherSite.push(await bareVisits(browser, host.otherSite));
        },
      ];
      if (i % 2) pair.reverse();
      for (const measure of pair) await measure();
      const runs = [() => runAll(launch, host, 1).then((m) => trials.one.push(m)), () => runAll(launch, host, CELLS).then((m) => trials.all.push(m))];
      if (i % 2) runs.reverse();
      for (const measure of runs) await measure();
    }
  } finally {
    await host.close();
  }
  const m = (list, key) => median(list.map((t) => t[key]));
  return {
    cells: CELLS,
    workersBeforeRun: Math.max(...trials.before.map((t) => t.workers)),
    shownMs: m(trials.before, "shownMs"),
    firstVisit: { cells: m(trials.cellsOtherSite, "first"), bare: m(trials.bareOtherSite, "first") },
    firstVisitSameSite: { cells: m(trials.cells, "first"), bare: m(trials.bare, "first") },
    repeatVisit: { cells: m(trials.cells, "repeat"), bare: m(trials.bare, "repeat") },
    memory: { allMiB: m(trials.all, "pssKiB") / 1024, oneMiB: m(trials.one, "pssKiB") / 1024 },
    longestTask: {
      made: spread(trials.before.map((t) => t.longestTaskMs)),
      run: spread([...trials.all, ...trials.cells, ...trials.cellsOtherSite].map((t) => t.longestTaskMs)),
    },
    trials,
  };
}
