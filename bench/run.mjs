#!/usr/bin/env node
// `npm run bench`: Kiln's runtime against the baselines it names, each measured in the same
// run, the same engine and the same conditions (fresh browser contexts, service workers off).
// Headless Chromium measures every row; Firefox ESR the runtime rows (start-up, spare and
// Restart, round trips, interrupts, recovery). Prints a table per engine (text and Markdown)
// and writes bench/results.json with the machine it ran on. See docs/benchmark.md.
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { preview } from "vite";
import { cellsPageBench } from "./cells.mjs";
import { embedPage } from "./embed.mjs";
import { manyFiles } from "./files.mjs";
import { bigNotebook } from "./notebook.mjs";
import { launchChromium, launchFirefox, TRIALS, wanted } from "./lib.mjs";
import { markdownTable, printTable, runtimeRows } from "./report.mjs";
import { bootCounts, harnessPage, interruptLatency, recovery, roundTrips, spareAndRestart, spareTasksHarness, STATES } from "./session.mjs";
import { startup } from "./startup.mjs";
import { flood, spareTasksPlayground, upload } from "./ui.mjs";
import { jupyterRoundTrip } from "./jupyter.mjs";

/** No step takes longer than this (BENCH_STEP_MINUTES), whatever it waits for. */
const STEP_TIMEOUT_MS = Number(process.env.BENCH_STEP_MINUTES ?? 30) * 60_000;
/** Figures that could not be taken: step and error. */
const failures = [];

/**
 * Step `name`, timed and logged as it goes. A step that fails (a timeout, a wrong answer) is
 * reported and recorded, and the benchmark goes on with the next one.
 */
async function step(name, task) {
  const started = Date.now();
  process.stdout.write(`  ${name}…`);
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no result after ${STEP_TIMEOUT_MS / 60_000} minutes`)), STEP_TIMEOUT_MS);
  });
  try {
    const value = await Promise.race([task(), timeout]);
    console.log(` ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return value;
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    console.log(` FAILED: ${message}`);
    failures.push({ step: name, error: message });
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** The rows measured through the runtime API and start-up, in either engine. */
async function runtimeFigures(browser, origin, results) {
  if (wanted("startup")) results.startup = await step("start-up", () => startup(browser, origin));
  const onHarness = ["spare", "roundTrip", "state", "interrupt", "recovery"].filter(wanted);
  if (onHarness.length) {
    const opened = await step("a harness page with a session", () => harnessPage(browser, origin));
    if (!opened) return;
    const { page, context } = opened;
    try {
      results.runtime = await page.evaluate(() => window.session.ready.then(({ pythonVersion, pyodideVersion }) => ({ pythonVersion, pyodideVersion })));
      if (wanted("spare")) results.spare = await step("Restart and a new worker", () => spareAndRestart(page));
      const kinds = [...(wanted("roundTrip") ? ["empty"] : []), ...(wanted("state") ? Object.keys(STATES).filter((k) => k !== "empty") : [])];
      if (kinds.length) {
        if (!kinds.includes("empty")) kinds.unshift("empty"); // the states are compared with it
        results.roundTrip = await step("1+1 round trips", () => roundTrips(page, kinds));
      }
      if (wanted("interrupt")) {
        results.interrupt = await step("interrupts", async () => ({
          busyLoop: await interruptLatency(page, "while True: pass"),
          sleep: await interruptLatency(page, "import time\ntime.sleep(1000)"),
        }));
      }
      if (wanted("recovery")) results.recovery = await step("recovery", () => recovery(page));
      results.harnessBootCounts = await bootCounts(page);
    } finally {
      await context.close();
    }
  }
}

function machine() {
  const cpus = os.cpus();
  const pyodide = JSON.parse(readFileSync(new URL("../node_modules/pyodide/package.json", import.meta.url), "utf8")).version;
  return {
    cpu: cpus[0]?.model ?? "unknown",
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    pyodide,
    freshMemoryMBps: freshMemoryRate(),
  };
}

/**
 * How fast this machine hands out memory touched for the first time (MB/s, median of 3):
 * a fresh 256 MB buffer filled once. Starting a worker touches about 100 MB of fresh memory
 * (the snapshot's heap, the module, the engine's own), so this sets much of its time; virtual
 * machines differ here by ten times and more.
 */
function freshMemoryRate() {
  const rates = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    new Uint8Array(256e6).fill(1);
    rates.push(256 / ((performance.now() - started) / 1000));
  }
  return Math.round(rates.sort((a, b) => a - b)[1]);
}

const server = await preview({ preview: { port: 0, strictPort: true }, logLevel: "warn" });
const origin = new URL(server.resolvedUrls.local[0]).origin;
const results = { date: new Date().toISOString(), trials: TRIALS, machine: machine(), conditions: "fresh browser contexts, service workers off, no network events in Firefox's driver, HTTP cache cold on a first visit and warm on a repeat visit" };
const markdown = [];
try {
  console.log(`Kiln at ${origin}; ${TRIALS} trials`);
  if (process.env.BENCH_CHROMIUM !== "0") {
    console.log("Chromium:");
    const browser = await launchChromium();
    const r = (results.chromium = {});
    try {
      r.version = browser.version();
      await runtimeFigures(browser, origin, r);
      if (wanted("spareTasks")) {
        r.spareTasks = await step("long tasks while a spare loads", async () => ({
          harness: await spareTasksHarness(browser, origin),
          playground: await spareTasksPlayground(browser, origin),
        }));
      }
      if (wanted("flood")) r.flood = await step("flood", () => flood(browser, origin));
      if (wanted("upload")) r.upload = await step("upload", () => upload(browser, origin));
      if (wanted("jupyter")) r.jupyter = await step("1+1 in the Playground, browser and a local Jupyter server", () => jupyterRoundTrip(browser, origin));
      if (wanted("manyFiles")) r.manyFiles = await step("Python ready with 10,000 files stored", () => manyFiles(browser, origin));
      if (wanted("notebook")) r.notebook = await step("a 500-cell notebook", () => bigNotebook(browser, origin));
      if (wanted("cells")) r.cells = await step("cells in a page (embed.js)", () => cellsPageBench(browser, launchChromium, origin));
    } finally {
      await browser.close();
    }
    // Each measurement in a browser of its own, so that memory is comparable.
    if (wanted("embed")) r.embed = await step("10 widgets against 10 bare workers", () => embedPage(launchChromium, origin));
    const rows = runtimeRows(r);
    printTable(`Chromium ${r.version}`, rows);
    markdown.push(`Chromium ${r.version}:\n\n${markdownTable(rows)}`);
  }

  if (process.env.BENCH_FIREFOX !== "0") {
    console.log("\nFirefox ESR:");
    const firefox = await launchFirefox();
    const r = (results.firefox = {});
    try {
      r.version = await firefox.version();
      await runtimeFigures(firefox, origin, r);
    } finally {
      await firefox.close();
    }
    const rows = runtimeRows(r);
    printTable(r.version, rows);
    markdown.push(`${r.version}:\n\n${markdownTable(rows)}`);
  }
  results.failures = failures;
  if (failures.length) console.log(`\nFAILED: ${failures.map((f) => `${f.step} (${f.error})`).join("; ")}`);
  const m = results.machine;
  results.markdown = `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB (fresh memory ${m.freshMemoryMBps} MB/s); ${m.os}; Node ${m.node}; Pyodide ${m.pyodide}; ${TRIALS} trials.\n\n${markdown.join("\n\n")}`;
  console.log(`\n${results.markdown}`);
  writeFileSync(new URL("results.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  console.log("\nWrote bench/results.json");
} finally {
  await server.close();
}
if (failures.length) process.exitCode = 1;
