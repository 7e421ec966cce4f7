#!/usr/bin/env node
// `node bench/wasm-compile.mjs` (after `npm run build` or `npm run bench`): how much of
// pyodide.asm.wasm Chromium compiles on each visit to the Playground, from its trace events,
// and whether its compiled-code cache is used (a module written to the cache on one visit,
// read back on the next). Four visits in one browser profile, each running a little Python.
import { chromium } from "@playwright/test";
import { preview } from "vite";
import { createServer } from "node:net";

const VISITS = Number(process.env.VISITS ?? 4);
const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});
const server = await preview({ preview: { port, strictPort: true }, logLevel: "warn" });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
try {
  const page = await (await browser.newContext()).newPage();
  for (let visit = 1; visit <= VISITS; visit++) {
    await browser.startTracing(page, { categories: ["v8.wasm", "disabled-by-default-v8.wasm.detailed"] });
    if (visit === 1) await page.goto(`http://localhost:${port}/#/playground`);
    else await page.reload();
    await page.getByRole("status").filter({ hasText: "Python ready" }).waitFor({ timeout: 120_000 });
    const cell = page.getByRole("region", { name: "Cell 1" });
    await cell.getByRole("textbox", { name: "Python code" }).fill("s = 0\nfor i in range(200000):\n    s += len(str(i))\nprint(s)");
    await cell.getByRole("button", { name: "Run cell" }).click();
    await page.getByText("1088890").first().waitFor({ timeout: 120_000 });
    const events = JSON.parse((await browser.stopTracing()).toString()).traceEvents;
    const ms = (name) => Math.round(events.filter((e) => e.name === name && e.dur).reduce((sum, e) => sum + e.dur, 0) / 1000);
    const count = (pattern) => events.filter((e) => pattern.test(e.name)).length;
    console.log(
      `visit ${visit}: baseline compilation ${ms("wasm.CompileBaseline")} ms, optimising compilation ${ms("wasm.TopTierCompilation")} ms, ` +
        `modules written to the code cache ${count(/^wasm\.SerializeModule$/)}, read from it ${count(/Deserialize/)}`,
    );
  }
} finally {
  await browser.close();
  await server.close();
}
