// A host page of 10 Kiln widgets (embed.html iframes) against a host page of 10 bare
// loadPyodide workers: time until all are ready, and the browser's memory then. Both host
// pages come from a server of their own (another origin, like a site that embeds Kiln, with
// no isolation headers), each in a newly launched Chromium so that memory is comparable.
import { createServer } from "node:http";
import { TRIALS, browserPssKiB, median, sleep, waitFor, waitQuiet } from "./lib.mjs";

export const WIDGETS = 10;

const WIDGETS_PAGE = (kiln, n) => `<!doctype html><meta charset="utf-8"><title>Widgets</title>
<body><script>
window.__ready = new Set(); window.__readyAt = undefined;
addEventListener("message", (event) => {
  if (event.origin !== ${JSON.stringify(kiln)} || event.data?.kiln !== 1 || event.data.type !== "ready") return;
  window.__ready.add(event.source);
  if (window.__ready.size === ${n} && window.__readyAt === undefined) window.__readyAt = performance.now();
});
for (let i = 0; i < ${n}; i++) {
  const frame = document.createElement("iframe");
  frame.src = ${JSON.stringify(kiln)} + "/embed.html?code=" + encodeURIComponent("print(" + i + ")");
  frame.title = "Python code you can run";
  frame.allow = "cross-origin-isolated";
  frame.style = "width:100%;height:160px;border:0";
  document.body.append(frame);
}
</script>`;

const BARE_PAGE = (kiln, n) => `<!doctype html><meta charset="utf-8"><title>Bare workers</title>
<body><script>
const index = ${JSON.stringify(`${kiln}/pyodide/`)};
const source = "const { loadPyodide } = await import(" + JSON.stringify(index + "pyodide.mjs") + ");" +
  "await loadPyodide({ indexURL: " + JSON.stringify(index) + ", stdLibURL: " + JSON.stringify(index + "stock/python_stdlib.zip") + " }); postMessage('loaded');";
window.__loaded = 0; window.__readyAt = undefined; window.__workers = [];
for (let i = 0; i < ${n}; i++) {
  const worker = new Worker("data:text/javascript," + encodeURIComponent(source), { type: "module" });
  window.__workers.push(worker);
  worker.onmessage = () => { if (++window.__loaded === ${n}) window.__readyAt = performance.now(); };
  worker.onerror = (event) => { window.__failed = event.message || "a bare worker failed"; };
}
</script>`;

/** A server for the host pages, on a port chosen now; resolves with its origin and a close function. */
function hostServer(kiln) {
  const server = createServer((request, response) => {
    const page = request.url.startsWith("/widgets") ? WIDGETS_PAGE(kiln, WIDGETS) : request.url.startsWith("/bare") ? BARE_PAGE(kiln, WIDGETS) : null;
    response.writeHead(page ? 200 : 404, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
    response.end(page ?? "");
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve({ origin: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((done) => server.close(done)) }));
  });
}

/** One measurement in a newly launched browser: ms until all were ready, and PSS (KiB) once idle. */
async function measure(launch, url) {
  const browser = await launch();
  try {
    const context = await browser.newContext({ serviceWorkers: "block" });
    const page = await context.newPage();
    if (!url) {
      await page.goto("about:blank");
      await waitQuiet();
      return { ms: 0, pssKiB: browserPssKiB() };
    }
    await page.goto(url);
    const ms = await waitFor(
      page,
      `all ${WIDGETS} interpreters to be ready`,
      () => {
        if (window.__failed) throw new Error(window.__failed);
        return window.__readyAt;
      },
      undefined,
      { timeout: 300_000, every: 100 },
    );
    await waitQuiet();
    await sleep(500);
    return { ms, pssKiB: browserPssKiB() };
  } finally {
    await browser.close();
  }
}

export async function embedPage(launch, kiln) {
  const host = await hostServer(kiln);
  const widgets = [], bare = [], idle = [];
  try {
    for (let i = 0; i < TRIALS; i++) {
      const pair = [
        ["widgets", `${host.origin}/widgets.html`, widgets],
        ["bare", `${host.origin}/bare.html`, bare],
      ];
      if (i % 2) pair.reverse();
      for (const [, url, list] of pair) list.push(await measure(launch, url));
    }
    idle.push(await measure(launch, null));
  } finally {
    await host.close();
  }
  const summary = (list) => ({ ms: median(list.map((m) => m.ms)), pssMiB: median(list.map((m) => m.pssKiB / 1024)), trials: list });
  return { widgets: summary(widgets), bare: summary(bare), idle: summary(idle) };
}
