#!/usr/bin/env node
// Two builds' start-up side by side, for a change to start-up whose gain is smaller than the
// benchmark's spread from one run to the next: `node bench/compare-builds.mjs <dirA> <dirB>`,
// where each folder is a `vite build --mode test --outDir <dir>` (BENCH_ENGINE=firefox for
// Firefox ESR; BENCH_ROUNDS, default 4). Each round takes, in both builds and in alternating
// order, the harness's "ready" on a repeat visit and two new workers (no spare) on that page;
// with BENCH_PAGE=playground, the Playground's "ready" on a repeat visit instead.
// The pages get this checkout's headers: builds whose host frame bootstrap differs (its
// Content-Security-Policy hash) cannot be compared this way.
import { preview } from "vite";
import { launchChromium, launchFirefox, median, onNewDocument, openPage, playgroundReady, recordPage, sleep, waitFor } from "./lib.mjs";

const dirs = process.argv.slice(2);
if (dirs.length !== 2) throw new Error("usage: node bench/compare-builds.mjs <build folder A> <build folder B>");
const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
const firefox = process.env.BENCH_ENGINE === "firefox";
const playground = process.env.BENCH_PAGE === "playground";

const ready = (page) => waitFor(page, "a PythonSession to be ready", () => window.kiln?.startedAt);
const newWorkerMs = (page) =>
  page.evaluate(async () => {
    const started = performance.now();
    const handle = new window.kiln.WorkerHandle(window.kiln.defaultConfig);
    await handle.ready;
    const ms = performance.now() - started;
    handle.terminate();
    return ms;
  });

const servers = [];
for (const outDir of dirs) servers.push(await preview({ build: { outDir }, preview: { port: 0, strictPort: true }, logLevel: "warn" }));
const browser = firefox ? await launchFirefox() : await launchChromium();
const results = dirs.map(() => ({ repeat: [], worker: [] }));
try {
  for (let round = 0; round < rounds; round++) {
    for (const i of round % 2 ? [1, 0] : [0, 1]) {
      const origin = new URL(servers[i].resolvedUrls.local[0]).origin;
      const { page, context } = await openPage(browser);
      try {
        if (playground) {
          await onNewDocument(page, recordPage);
          await page.goto(`${origin}/#/playground`);
          await playgroundReady(page);
          await sleep(5000); // the spare loads and the snapshot is stored
          await page.reload();
          results[i].repeat.push(await playgroundReady(page));
          continue;
        }
        await page.goto(`${origin}/harness.html?start=session`);
        await ready(page);
        await sleep(5000); // the spare loads and the snapshot is stored
        await page.reload();
        results[i].repeat.push(await ready(page));
        await page.evaluate(() => window.kiln.sparesReady());
        for (let k = 0; k < 2; k++) {
          await sleep(1500);
          results[i].worker.push(await newWorkerMs(page));
        }
      } finally {
        await context.close();
      }
    }
  }
} finally {
  await browser.close();
  for (const server of servers) await server.close();
}
const show = (xs) => `median ${Math.round(median(xs))} ms [${xs.map(Math.round).join(", ")}]`;
dirs.forEach((dir, i) => console.log(`${dir}\n  repeat visit ready: ${show(results[i].repeat)}\n  new worker ready:   ${show(results[i].worker)}`));
const ratio = (key) => (median(results[1][key]) / median(results[0][key])).toFixed(2);
console.log(`B / A: repeat visit ${ratio("repeat")}×, new worker ${ratio("worker")}×`);
