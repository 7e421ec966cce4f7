#!/usr/bin/env node
// `npm run bench`: Kiln's runtime against the baselines it names, measured in one run in
// headless Chromium, and (start-up, round trip, interrupt, recovery) in Firefox ESR too, each
// against a bare loadPyodide in the same engine. Prints a table per engine and writes
// bench/results.json. Each figure is a median.
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium } from "@playwright/test";
import puppeteer from "puppeteer-core";
import { preview } from "vite";

const PORT = 4191;
const ORIGIN = `http://localhost:${PORT}`;
const ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const TRIALS = Number(process.env.BENCH_TRIALS ?? 3);
/** BENCH_ONLY=startup,roundTrip,interrupt,recovery,flood,upload measures a subset. */
const ONLY = process.env.BENCH_ONLY?.split(",");
const wanted = (name) => !ONLY || ONLY.includes(name);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

/** A bare worker: loadPyodide() from the same files, then runs code on request (the floor / what peers do). */
const BARE_WORKER = (indexURL) => `
const { loadPyodide } = await import(${JSON.stringify(indexURL + "pyodide.mjs")});
const started = performance.now();
const py = await loadPyodide({ indexURL: ${JSON.stringify(indexURL)} });
postMessage({ loadedMs: performance.now() - started });
onmessage = async (e) => { const value = await py.runPythonAsync(e.data); postMessage({ value: String(value) }); };`;

/** Playwright's Chromium or puppeteer's Firefox: a fresh context's page, and how to close it. */
async function openPage(browser) {
  const context = browser.newContext ? await browser.newContext() : await browser.createBrowserContext();
  return { page: await context.newPage(), context };
}

async function pythonReadyMs(page) {
  const end = Date.now() + 120_000;
  while (Date.now() < end) {
    const ready = await page.evaluate(() => document.querySelector("[role=status]")?.textContent?.includes("Python ready"));
    if (ready) return page.evaluate(() => performance.now());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("Python did not become ready");
}

async function bareLoadMs(page) {
  return page.evaluate(async (source) => {
    const url = `data:text/javascript,${encodeURIComponent(source)}`;
    const created = performance.now();
    const worker = new Worker(url, { type: "module" });
    await new Promise((resolve) => (worker.onmessage = resolve));
    const ms = performance.now() - created;
    worker.terminate();
    return ms;
  }, BARE_WORKER(`${ORIGIN}/pyodide/`));
}

async function startup(browser) {
  const kilnCold = [], kilnWarm = [], floorCold = [], floorWarm = [];
  for (let i = 0; i < TRIALS; i++) {
    const { page, context } = await openPage(browser);
    await page.goto(`${ORIGIN}/#/playground`);
    kilnCold.push(await pythonReadyMs(page));
    await new Promise((resolve) => setTimeout(resolve, 3000)); // let the spare finish loading before reloading
    await page.reload();
    kilnWarm.push(await pythonReadyMs(page));
    await context.close();

    const { page: floorPage, context: floorContext } = await openPage(browser);
    await floorPage.goto(`${ORIGIN}/harness.html`);
    const navigation = await floorPage.evaluate(() => performance.now());
    floorCold.push(navigation + (await bareLoadMs(floorPage)));
    await floorPage.reload();
    const navigationWarm = await floorPage.evaluate(() => performance.now());
    floorWarm.push(navigationWarm + (await bareLoadMs(floorPage)));
    await floorContext.close();
  }
  return { kilnCold: median(kilnCold), floorCold: median(floorCold), kilnWarm: median(kilnWarm), floorWarm: median(floorWarm) };
}

async function harnessPage(browser) {
  const { page, context } = await openPage(browser);
  await page.goto(`${ORIGIN}/harness.html`);
  await page.evaluate(async () => {
    window.session = new window.kiln.PythonSession({ ...window.kiln.defaultConfig, timeoutMs: 0 });
    await window.session.ready;
    await window.kiln.sparesReady();
  });
  return { page, context };
}

async function roundTrip(page) {
  const times = await page.evaluate(async () => {
    for (let i = 0; i < 30; i++) await window.session.run("1+1");
    const times = [];
    for (let i = 0; i < 300; i++) {
      const start = performance.now();
      const result = await window.session.run("1+1");
      times.push(performance.now() - start);
      if (result.value?.["text/plain"] !== "2") throw new Error("1+1 is not 2");
    }
    return times;
  });
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

async function interruptLatency(page, code) {
  const times = [];
  for (let i = 0; i < TRIALS + 2; i++) {
    times.push(
      await page.evaluate(async (code) => {
        const running = window.session.run(code);
        await new Promise((resolve) => setTimeout(resolve, 300));
        const stop = performance.now();
        window.session.interrupt();
        const result = await running;
        if (result.status !== "interrupted") throw new Error(`expected interrupted, got ${result.status}`);
        if (result.restored) throw new Error("a soft interrupt should not need a new worker");
        return performance.now() - stop;
      }, code),
    );
  }
  return median(times);
}

const DEADLINE_MS = 500;
const STATE = "number, text, items = 42, 'x', [1, 2, 3]\nmapping = {'k': (1, 2)}\nclass Point:\n    def __init__(self, x): self.x = x\npoint = Point(3)";

async function recovery(page) {
  const kiln = [];
  for (let i = 0; i < TRIALS; i++) {
    kiln.push(
      await page.evaluate(
        async ({ deadline, state }) => {
          await window.session.run(state);
          await window.kiln.sparesReady();
          const start = performance.now();
          const hung = await window.session.run("sum(range(10**13))", { timeoutMs: deadline });
          const next = await window.session.run("(number, text, items, mapping, point.x)");
          const ms = performance.now() - start - deadline;
          if (hung.status !== "timeout" || hung.restored?.lost.length) throw new Error(`bad recovery: ${JSON.stringify(hung)}`);
          if (next.value?.["text/plain"] !== "(42, 'x', [1, 2, 3], {'k': (1, 2)}, 3)") throw new Error("state not restored");
          return ms;
        },
        { deadline: DEADLINE_MS, state: STATE },
      ),
    );
  }
  const baseline = [];
  for (let i = 0; i < TRIALS; i++) {
    baseline.push(
      await page.evaluate(
        async ({ source, deadline }) => {
          const url = `data:text/javascript,${encodeURIComponent(source)}`;
          const message = (worker) => new Promise((resolve) => (worker.onmessage = (e) => resolve(e.data)));
          let worker = new Worker(url, { type: "module" });
          await message(worker);
          worker.postMessage("sum(range(10**13))");
          await new Promise((resolve) => setTimeout(resolve, deadline));
          const start = performance.now();
          worker.terminate();
          worker = new Worker(url, { type: "module" });
          await message(worker);
          worker.postMessage("1");
          await message(worker);
          worker.terminate();
          return performance.now() - start;
        },
        { source: BARE_WORKER(`${ORIGIN}/pyodide/`), deadline: DEADLINE_MS },
      ),
    );
  }
  return { kiln: median(kiln), baseline: median(baseline) };
}

/** From now on, `window.longest` holds the longest main-thread task and `window.watchStart` the start time. */
async function watchMainThread(page) {
  await page.evaluate(() => {
    window.longest = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.longest = Math.max(window.longest, entry.duration);
    }).observe({ type: "longtask" });
    window.watchStart = performance.now();
  });
}

async function flood(browser) {
  const durations = [], longest = [];
  for (let i = 0; i < TRIALS; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${ORIGIN}/#/playground`);
    await pythonReadyMs(page);
    await page.getByRole("textbox", { name: "Python code" }).fill("for i in range(10**6):\n    print(i)");
    await watchMainThread(page);
    await page.getByRole("button", { name: "Run" }).click();
    await page.locator("[data-finished-runs='1']").waitFor({ timeout: 120_000 });
    const { ms, task } = await page.evaluate(() => ({ ms: performance.now() - window.watchStart, task: window.longest }));
    durations.push(ms);
    longest.push(task);
    await context.close();
  }
  return { ms: median(durations), longestTaskMs: Math.max(...longest) };
}

/** A 200 MB file through "Upload files": time until it is listed, and the longest main-thread task. */
async function upload(browser) {
  const dir = mkdtempSync(path.join(tmpdir(), "kiln-bench-"));
  const file = path.join(dir, "big.bin");
  const fd = openSync(file, "w");
  const chunk = Buffer.alloc(8 * 1024 * 1024, 1);
  for (let i = 0; i < 25; i++) writeSync(fd, chunk);
  closeSync(fd);
  const durations = [], floors = [], longest = [];
  try {
    for (let i = 0; i < TRIALS; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${ORIGIN}/#/playground`);
      await pythonReadyMs(page);
      await watchMainThread(page);
      const input = page.getByLabel("Choose files to upload");
      await input.setInputFiles(file);
      await page.getByRole("list", { name: "Files" }).getByText("200 MiB").waitFor({ timeout: 300_000 });
      // Listed once saved; done once the last piece is in Python's file system.
      await page.getByText(/Uploading/).waitFor({ timeout: 300_000 });
      await page.getByText(/Uploading/).waitFor({ state: "detached", timeout: 300_000 });
      const { ms, task } = await page.evaluate(() => ({ ms: performance.now() - window.watchStart, task: window.longest }));
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
      durations.push(ms);
      longest.push(task);
      await context.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { ms: median(durations), floorMs: median(floors), longestTaskMs: Math.max(...longest) };
}

/** Start-up, round trip, interrupt and recovery in one engine. */
async function runtimeFigures(browser) {
  const results = {};
  if (wanted("startup")) results.startup = await startup(browser);
  if (wanted("roundTrip") || wanted("interrupt") || wanted("recovery")) {
    const { page, context } = await harnessPage(browser);
    if (wanted("roundTrip")) results.roundTrip = await roundTrip(page);
    if (wanted("interrupt")) {
      results.interrupt = {
        busyLoopMs: await interruptLatency(page, "while True: pass"),
        sleepMs: await interruptLatency(page, "import time\ntime.sleep(1000)"),
      };
    }
    if (wanted("recovery")) results.recovery = await recovery(page);
    await context.close();
  }
  return results;
}

const f = (ms) => `${ms < 10 ? ms.toFixed(2) : Math.round(ms)} ms`;
function runtimeRows(r) {
  return [
    ...(r.startup
      ? [
          ["Python ready, cold load", f(r.startup.kilnCold), `bare loadPyodide: ${f(r.startup.floorCold)}`, `${(r.startup.kilnCold / r.startup.floorCold).toFixed(2)}× the floor`],
          ["Python ready, warm reload", f(r.startup.kilnWarm), `bare loadPyodide: ${f(r.startup.floorWarm)}`, `${(r.startup.kilnWarm / r.startup.floorWarm).toFixed(2)}× the floor`],
        ]
      : []),
    ...(r.roundTrip
      ? [
          ["1+1 round trip p50", f(r.roundTrip.p50), "target < 5 ms", ""],
          ["1+1 round trip p95", f(r.roundTrip.p95), "", ""],
        ]
      : []),
    ...(r.interrupt
      ? [
          ["interrupt `while True: pass`", f(r.interrupt.busyLoopMs), "target < 100 ms", ""],
          ["interrupt `time.sleep(1000)`", f(r.interrupt.sleepMs), "target < 100 ms", ""],
        ]
      : []),
    ...(r.recovery
      ? [["recovery after deadline", f(r.recovery.kiln), `terminate + reload: ${f(r.recovery.baseline)}`, `${(r.recovery.baseline / r.recovery.kiln).toFixed(1)}× faster (target ≥ 10×)`]]
      : []),
  ];
}

function printTable(title, rows) {
  if (!rows.length) return;
  console.log(`\n${title}`);
  const widths = [0, 1, 2, 3].map((c) => Math.max(...rows.map((row) => row[c].length)));
  for (const row of rows) console.log(row.map((cell, c) => cell.padEnd(widths[c])).join("  "));
}

const server = await preview({ preview: { port: PORT, strictPort: true }, logLevel: "warn" });
const results = { date: new Date().toISOString(), trials: TRIALS };
try {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ARGS });
  try {
    results.chromium = await runtimeFigures(browser);
    if (wanted("flood")) results.chromium.flood = await flood(browser);
    if (wanted("upload")) results.chromium.upload = await upload(browser);
  } finally {
    await browser.close();
  }
  const r = results.chromium;
  printTable("Chromium", [
    ...runtimeRows(r),
    ...(r.upload
      ? [["upload 200 MB, saved and in Python", f(r.upload.ms), `read into memory only: ${f(r.upload.floorMs)}; longest main-thread task: ${r.upload.longestTaskMs ? f(r.upload.longestTaskMs) : "none over 50 ms"}`, "target: no task > 100 ms"]]
      : []),
    ...(r.flood ? [["flood of 10^6 prints", f(r.flood.ms), `longest main-thread task: ${r.flood.longestTaskMs ? f(r.flood.longestTaskMs) : "none over 50 ms"}`, "target < 100 ms"]] : []),
  ]);

  if (process.env.BENCH_FIREFOX !== "0") {
    const firefox = await puppeteer.launch({ browser: "firefox", executablePath: process.env.FIREFOX_PATH ?? "/usr/bin/firefox-esr", headless: true });
    try {
      results.firefox = await runtimeFigures(firefox);
    } finally {
      await firefox.close();
    }
    printTable("Firefox ESR", runtimeRows(results.firefox));
  }
  writeFileSync("bench/results.json", `${JSON.stringify(results, null, 2)}\n`);
  console.log("\nWrote bench/results.json");
} finally {
  await server.close();
}
