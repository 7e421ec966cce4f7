// "Python ready" on a first visit and on a repeat visit (the same browser context, reloaded),
// for the Playground and for a PythonSession on the harness page, each against a bare
// loadPyodide() on the harness page, in fresh contexts with service workers off. Beside them,
// the floor: a worker on the harness page that only fetches and compiles Pyodide's
// WebAssembly, which every start of Pyodide does before anything else can run.
import { TRIALS, median, onNewDocument, openPage, playgroundReady, recordPage, waitFor, waitQuiet } from "./lib.mjs";

const harnessStarted = (page, what) => waitFor(page, what, () => window.kiln?.startedAt, undefined, { timeout: 120_000 });
const bootCounts = (page) => page.evaluate(() => window.kiln?.bootCounts?.() ?? null);

/** First and repeat visit of one page kind; `ready(page)` is the ms since navigation at which Python was ready. */
async function visits(browser, url, ready, { counts = false } = {}) {
  const { page, context } = await openPage(browser);
  try {
    await onNewDocument(page, recordPage);
    await page.goto(url);
    const first = await ready(page);
    // Whatever the page does once Python is ready (a warm spare, storing a snapshot) finishes before the reload.
    const settledMs = await waitQuiet();
    const firstCounts = counts ? await bootCounts(page) : null;
    await page.reload();
    const repeat = await ready(page);
    if (counts) await waitQuiet(); // the repeat visit's spare boots too
    const repeatCounts = counts ? await bootCounts(page) : null;
    return { first, repeat, settledMs, firstCounts, repeatCounts };
  } finally {
    await context.close();
  }
}

export async function startup(browser, origin) {
  const kinds = {
    playground: () => visits(browser, `${origin}/#/playground`, playgroundReady),
    session: () => visits(browser, `${origin}/harness.html?start=session`, (page) => harnessStarted(page, "a PythonSession to be ready"), { counts: true }),
    bare: () => visits(browser, `${origin}/harness.html?start=bare`, (page) => harnessStarted(page, "a bare loadPyodide to finish")),
    compile: () => visits(browser, `${origin}/harness.html?start=compile`, (page) => harnessStarted(page, "Pyodide's WebAssembly to compile")),
  };
  const trials = { playground: [], session: [], bare: [], compile: [] };
  const order = Object.keys(kinds);
  for (let i = 0; i < TRIALS; i++) {
    // A different order each trial, so no kind always goes first after a quiet machine.
    for (const kind of [...order.slice(i % order.length), ...order.slice(0, i % order.length)]) trials[kind].push(await kinds[kind]());
  }
  const figures = (list) => ({ first: median(list.map((t) => t.first)), repeat: median(list.map((t) => t.repeat)), trials: list });
  return {
    playground: figures(trials.playground),
    session: figures(trials.session),
    bare: figures(trials.bare),
    compile: figures(trials.compile),
    // Worker boots on the harness page (window.kiln.bootCounts, where the start-up code provides it): after the first visit, after the repeat.
    bootCounts: trials.session.map((t) => ({ first: t.firstCounts, repeat: t.repeatCounts })),
  };
}
