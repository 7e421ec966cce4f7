// Shared pieces of the benchmark: settings from the environment, statistics, pages, waits
// that fail loudly, main-thread long tasks, and the browser's processes (CPU, memory).
import { readFileSync, readdirSync } from "node:fs";
import { chromium } from "@playwright/test";
import puppeteer from "puppeteer-core";

export const TRIALS = Number(process.env.BENCH_TRIALS ?? 3);
/** BENCH_ONLY=startup,spare,roundTrip,state,interrupt,recovery,flood,upload,manyFiles,notebook,spareTasks,embed,cells measures a subset. */
const ONLY = process.env.BENCH_ONLY?.split(",").map((name) => name.trim());
export const wanted = (name) => !ONLY || ONLY.includes(name);

export const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
/** Service workers are off in both engines, for Kiln and its baselines alike. */
export const FIREFOX_PREFS = { "dom.serviceWorkers.enabled": false };

export const launchChromium = () => chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: CHROMIUM_ARGS });
/**
 * Firefox ESR through WebDriver BiDi, without the protocol's network events, which no figure
 * uses: while a client listens to them, Firefox's network observer copies every response on
 * its parent process's main thread (about 200–300 ms of a core on a repeat visit that reads
 * Pyodide's 13 MB), a cost no visitor pays.
 */
export const launchFirefox = () =>
  puppeteer.launch({ browser: "firefox", executablePath: process.env.FIREFOX_PATH ?? "/usr/bin/firefox-esr", headless: true, extraPrefsFirefox: FIREFOX_PREFS, networkEnabled: false });

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function median(xs) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
/** Median and maximum of per-trial figures (and the trials themselves). */
export const spread = (xs) => ({ median: median(xs), max: Math.max(...xs), trials: xs });

/** A fresh browser context (service workers blocked) and a page in it: Playwright's Chromium or puppeteer's Firefox. */
export async function openPage(browser) {
  const context = browser.newContext ? await browser.newContext({ serviceWorkers: "block" }) : await browser.createBrowserContext();
  return { page: await context.newPage(), context };
}

/** Runs `fn(arg)` in every document the page loads from now on, before its own scripts. */
export async function onNewDocument(page, fn, arg) {
  if (page.addInitScript) await page.addInitScript(fn, arg);
  else await page.evaluateOnNewDocument(fn, arg);
}

/**
 * Polls `fn(arg)` in the page until it returns something other than undefined/null/false,
 * and returns it; throws, naming `what`, after `timeout` ms. Wait only on states that stay
 * (a counter, a recorded time), never on one that may already have passed.
 */
export async function waitFor(page, what, fn, arg, { timeout = 120_000, every = 50 } = {}) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await page.evaluate(fn, arg);
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > end) throw new Error(`Timed out after ${Math.round(timeout / 1000)} s waiting for ${what}`);
    await sleep(every);
  }
}

/**
 * Init script: `window.__benchReady` is set to the time (ms since navigation) at which the
 * page's status first reads "Python ready"; `window.__benchTasks` collects long tasks
 * (Chromium reports them; other engines leave it empty).
 */
export function recordPage() {
  window.__benchTasks = [];
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.__benchTasks.push({ start: entry.startTime, duration: entry.duration });
    }).observe({ type: "longtask", buffered: true });
  } catch {
    // No long task timing in this engine.
  }
  const check = () => {
    if (window.__benchReady === undefined && document.querySelector("[role=status]")?.textContent?.includes("Python ready")) {
      window.__benchReady = performance.now();
    }
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true });
}

/** The longest main-thread task that started in [from, to] (ms since navigation); 0 when none passed 50 ms. */
export function longestTask(page, from = 0, to = Infinity) {
  return page.evaluate(
    ([from, to]) => Math.max(0, ...window.__benchTasks.filter((task) => task.start >= from && task.start <= to).map((task) => task.duration)),
    [from, to ?? 1e15],
  );
}

/** Waits for the Playground's status to read "Python ready" (recorded by {@link recordPage}); ms since navigation. */
export const playgroundReady = (page, timeout = 120_000) =>
  waitFor(page, '"Python ready" on the Playground', () => window.__benchReady, undefined, { timeout });

// --- The browser's processes (Linux /proc) ---------------------------------------------

function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return -1;
  }
}

/** Every process below this one (the browsers the benchmark launched, and their children). */
export function browserProcesses(root = process.pid) {
  let all;
  try {
    all = readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number);
  } catch {
    return [];
  }
  const children = new Map();
  for (const pid of all) {
    const parent = parentOf(pid);
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(pid);
  }
  const found = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length) {
    const pid = queue.shift();
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** CPU time (clock ticks) used so far by `pids`. */
function cpuTicks(pids) {
  let total = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      total += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}

/**
 * Waits until the browser's processes have used under 10% of one core for two half-second
 * windows in a row (a spare finished loading, a snapshot was stored), at most `capMs`.
 * Returns the ms waited. Without /proc it waits `capMs / 10`.
 */
export async function waitQuiet(capMs = 30_000) {
  const started = Date.now();
  if (!browserProcesses().length) {
    await sleep(capMs / 10);
    return Date.now() - started;
  }
  let quiet = 0;
  let before = cpuTicks(browserProcesses());
  while (Date.now() - started < capMs && quiet < 2) {
    await sleep(500);
    const now = cpuTicks(browserProcesses());
    quiet = now - before < 5 ? quiet + 1 : 0; // 100 ticks a second: 5 ticks in 0.5 s is 10% of a core
    before = now;
  }
  return Date.now() - started;
}

/**
 * Proportional set size (KiB) of the browser's processes: each page shared between processes
 * counted once in total, split among them. Null without /proc.
 */
export function browserPssKiB() {
  const pids = browserProcesses();
  if (!pids.length) return null;
  let total = 0;
  for (const pid of pids) {
    try {
      const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
      if (match) total += Number(match[1]);
    } catch {
      // Gone meanwhile, or not readable.
    }
  }
  return total;
}
