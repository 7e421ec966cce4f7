/**
 * The cross-engine suite: the same test bodies in Firefox ESR and WebKitGTK (the `firefox`
 * and `webkit` projects of playwright.config.ts; see driver.ts). Chromium runs every behaviour
 * here, and more, in the rest of the suite (the claim table of docs/testing.md names the spec of each). Each
 * test fails on an uncaught page error. Where an engine has no shared memory (WebKitGTK), the
 * bodies expect the fallbacks the browser table of docs/testing.md promises.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { apiBase, script } from "../support/chat";
import { freePort } from "../support/ports";
import { expect } from "@playwright/test";
import { hostTest } from "../support/embed-host";
import { serveCellPages, type CellPages } from "../support/cell-pages";
import { startEngine, type Engine, type EngineName, type EnginePage } from "./driver";
import { startSocketServer } from "../support/socket-server";

const test = hostTest.extend<{ page2: EnginePage; playground: EnginePage }, { engineName: EngineName; engine: Engine; sharedPlayground: EnginePage }>({
  engineName: ["firefox", { option: true, scope: "worker" }],
  engine: [
    async ({ engineName }, use) => {
      const engine = await startEngine(engineName);
      await use(engine);
      await engine.stop();
    },
    { scope: "worker", timeout: 60_000 },
  ],
  page2: async ({ engine }, use) => {
    const page = await engine.newPage();
    await use(page);
    // No uncaught error in the page, in any engine.
    const errors = await page.errors();
    await page.close();
    expect(errors).toEqual([]);
  },
  // One Playground per engine and test worker, for the tests that need only a working one
  // (each new page is a new profile, and a first visit: seconds of Pyodide's boot).
  sharedPlayground: [
    async ({ engine }, use, workerInfo) => {
      const page = await engine.newPage();
      await openPlayground(page, workerInfo.project.use.baseURL!);
      // No uncaught error while it started.
      expect(await page.errors()).toEqual([]);
      await use(page);
      await page.close();
    },
    { scope: "worker", timeout: 120_000 },
  ],
  playground: async ({ sharedPlayground: page }, use) => {
    const before = (await page.errors()).length;
    await use(page);
    // No uncaught error in the page during this test.
    expect((await page.errors()).slice(before)).toEqual([]);
  },
});

const base = () => test.info().project.use.baseURL!;
const js = JSON.stringify;

async function waitFor(page: EnginePage, expression: string, timeout = 90_000): Promise<void> {
  await expect.poll(async () => page.eval<boolean>(`Boolean(${expression})`).catch(() => false), { timeout, intervals: [200] }).toBe(true);
}

const OUTPUT = `document.querySelector("[aria-label=Output]")`;
const statusText = `(document.querySelector("[role=status]")?.textContent || "")`;
// The DOM's text, not innerText: output under \`content-visibility: auto\` has no rendered text
// until the frame after it arrives, so innerText read at once can be "" in Firefox.
const outputText = `(${OUTPUT}?.textContent || "")`;
const finishedRuns = `Number(${OUTPUT}?.getAttribute("data-finished-runs") || 0)`;

/**
 * How many start-up snapshots the page's origin has stored (see src/runtime/snapshot-store.ts).
 * A database that is not there yet is not made here: its upgrade is aborted.
 */
const STORED_SNAPSHOTS = `new Promise((resolve) => {
  const open = indexedDB.open("kiln-python-snapshots");
  open.onupgradeneeded = () => open.transaction.abort();
  open.onerror = () => resolve(0);
  open.onsuccess = () => {
    const db = open.result;
    const count = db.transaction("snapshots").objectStore("snapshots").count();
    count.onsuccess = () => { db.close(); resolve(count.result); };
    count.onerror = () => { db.close(); resolve(0); };
  };
})`;

function button(name: string): string {
  return `[...document.querySelectorAll("button")].find((b) => (b.getAttribute("aria-label") || b.textContent.trim()) === ${js(name)})`;
}

async function click(page: EnginePage, name: string): Promise<void> {
  await waitFor(page, `${button(name)} && !${button(name)}.disabled`);
  await page.eval(`${button(name)}.click()`);
}

/** Set a React-controlled field (a label's input or textarea) as typing would. */
async function fill(page: EnginePage, field: string, value: string): Promise<void> {
  await page.eval(`(() => {
    const element = ${field};
    const proto = element instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, "value").set.call(element, ${js(value)});
    element.dispatchEvent(new Event("input", { bubbles: true }));
  })()`);
}
const labelled = (text: string) =>
  `[...document.querySelectorAll("label")].find((l) => l.textContent.trim().startsWith(${js(text)})).querySelector("input, select, textarea")`;

async function openPlayground(page: EnginePage, origin = base()): Promise<void> {
  await page.goto(`${origin}/#/playground`);
  await waitFor(page, `${statusText}.includes("Python ready")`);
}

/** Replace the editor's code (one line: the editor indents and closes brackets as one types). */
async function runCell(page: EnginePage, code: string, { stop = false } = {}): Promise<string> {
  const before = await page.eval<number>(finishedRuns);
  await page.typeOver(".cm-content", code);
  await waitFor(page, `document.querySelector(".cm-content").textContent === ${js(code)}`, 10_000);
  await click(page, "Run cell");
  if (stop) {
    // Stopped once it runs (a Stop in the very first milliseconds is the unit tests' and recovery.spec's case).
    await waitFor(page, `/Running… [1-9]/.test(${statusText})`);
    await click(page, "Stop");
  }
  await waitFor(page, `${finishedRuns} > ${before}`);
  await waitFor(page, `${statusText}.includes("Python ready")`);
  const text = await page.eval<string>(outputText);
  if (process.env.KILN_DEBUG) console.log(JSON.stringify({ code, text, status: await page.eval(statusText) }));
  return text;
}

/** Capture what a download hands the browser (the blob behind the link, and the file name) as `window.__downloaded`. */
const CAPTURE_DOWNLOADS = `(() => {
  const createObjectURL = URL.createObjectURL;
  const blobs = new Map();
  URL.createObjectURL = (blob) => { const url = createObjectURL(blob); blobs.set(url, blob); return url; };
  HTMLAnchorElement.prototype.click = function () {
    if (this.download) blobs.get(this.href).text().then((text) => (window.__downloaded = { name: this.download, text }));
  };
})()`;

// These share one Playground, in this order, in one test worker.
test.describe("in one Playground", () => {
  test.describe.configure({ mode: "default" });

  test("start, run, error and rich output", async ({ playground: page }) => {
    expect(await runCell(page, "print(6 * 7)")).toContain("42");
    expect(await runCell(page, "1 / 0")).toContain("ZeroDivisionError");
    await runCell(page, `type("R", (), {"_repr_markdown_": lambda self: "# Rich heading"})()`);
    // Markdown is rendered in the frames after the output arrives.
    await waitFor(page, `${OUTPUT}.querySelector("h1")?.textContent === "Rich heading"`, 10_000);
  });

  test("soft stop, hard stop with restore, sleep and input() without shared memory", async ({ playground: page, engineName }) => {
    const shared = await page.eval<boolean>("typeof SharedArrayBuffer === 'function' && crossOriginIsolated");
    expect(shared).toBe(engineName !== "webkit");
    await runCell(page, "x = 41");
    // Soft where shared memory exists; elsewhere the worker is replaced and x restored.
    expect(await runCell(page, "import time; time.sleep(60)", { stop: true })).toMatch(shared ? /Variables are kept/ : /restarted\. Variables restored: x/);
    expect(await runCell(page, "print(x + 1)")).toContain("42");
    // Stuck in C: always a replacement, with x restored.
    expect(await runCell(page, "sum(range(10**13))", { stop: true })).toMatch(/restored|replaced|restarted/i);
    expect(await runCell(page, "print(x + 1)")).toContain("42");
    expect(await runCell(page, "import time; time.sleep(0.2); print('slept')")).toContain("slept");
    if (!shared) expect(await runCell(page, "input('name? ')")).toContain("input() is not available on this page");
  });

  test("upload and download of a file", async ({ playground: page }) => {
    // Chosen in the Upload files picker (the files a person picks, set on its input).
    await page.eval(`(() => {
      const data = new DataTransfer();
      data.items.add(new File(["a,b\\n1,2\\n"], "data.csv", { type: "text/csv" }));
      const input = document.querySelector("input[aria-label='Choose files to upload']");
      input.files = data.files;
      input.dispatchEvent(new Event("change", { bubbles: true }));
    })()`);
    await waitFor(page, `document.querySelector("[aria-label=Files]")?.textContent.includes("data.csv")`);
    await runCell(page, `open("out.txt", "w").write(open("data.csv").read().upper())`);
    await waitFor(page, `document.querySelector("[aria-label=Files]")?.textContent.includes("out.txt")`);
    await page.eval(CAPTURE_DOWNLOADS);
    await click(page, "Download out.txt");
    await waitFor(page, "window.__downloaded");
    expect(await page.eval("window.__downloaded")).toEqual({ name: "out.txt", text: "A,B\n1,2\n" });
  });
});

const titleValue = `document.querySelector("[aria-label='Notebook title']")?.value`;
const firstCount = `document.querySelector(".cell-count")?.textContent`;

test("a notebook file opened, run and downloaded; its share link opened in a fresh page with nothing run", async ({ page2: page, engine }) => {
  // Two first visits (this page and the link's fresh one), each booting Python: minutes in WebKitGTK on a loaded machine.
  test.slow();
  await openPlayground(page);
  const notebook = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kiln_test: "kept" },
    cells: [
      { cell_type: "markdown", id: "intro", metadata: {}, source: "# From a file" },
      { cell_type: "code", id: "mean", metadata: {}, execution_count: 7, source: "print('ran', 6 * 7)", outputs: [{ output_type: "stream", name: "stdout", text: "from the file\n" }] },
    ],
  };
  // Chosen in the Open notebook picker (the file a person picks, set on its input).
  await page.eval(`(() => {
    const data = new DataTransfer();
    data.items.add(new File([${js(JSON.stringify(notebook))}], "small.ipynb"));
    const input = document.querySelector("input[aria-label='Choose a notebook to open']");
    input.files = data.files;
    input.dispatchEvent(new Event("change", { bubbles: true }));
  })()`);
  await waitFor(page, `${titleValue} === "small"`);
  await waitFor(page, `${outputText}.includes("from the file")`);
  expect(await page.eval(firstCount)).toBe("[7]");
  // Markdown is rendered in its turn with outputs (spread-work.ts), so it may come after the output.
  await waitFor(page, `document.querySelector("h1")?.textContent === "From a file"`);
  await waitFor(page, `${statusText}.includes("Python ready")`);
  await click(page, "Run all");
  await waitFor(page, `${outputText}.includes("ran 42")`);
  expect(await page.eval(firstCount)).toBe("[8]");

  await page.eval(CAPTURE_DOWNLOADS);
  await click(page, "Download notebook");
  await waitFor(page, "window.__downloaded");
  const downloaded = await page.eval<{ name: string; text: string }>("window.__downloaded");
  expect(downloaded.name).toBe("small.ipynb");
  const written = JSON.parse(downloaded.text);
  expect(written.metadata.kiln_test).toBe("kept");
  expect(written.cells[1].execution_count).toBe(8);
  expect(written.cells[1].outputs).toEqual([{ output_type: "stream", name: "stdout", text: ["ran 42\n"] }]);

  await click(page, "Share link");
  const linkBox = `document.querySelector("[aria-label='Link to this notebook']")`;
  await waitFor(page, linkBox);
  const link = await page.eval<string>(`${linkBox}.value`);
  expect(link).toMatch(/#\/playground\/shared\/[A-Za-z0-9_-]+$/);
  // A fresh page (a profile of its own): the notebook comes from the link alone.
  const other = await engine.newPage();
  try {
    await other.goto(link);
    await waitFor(other, `${titleValue} === "small"`);
    await waitFor(other, `/^#\\/playground\\/[0-9a-f-]{36}$/.test(location.hash)`);
    await waitFor(other, `${statusText}.includes("Python ready")`);
    expect(await other.eval(`document.querySelector(".cm-content, .code-text")?.textContent`)).toBe("print('ran', 6 * 7)");
    // Nothing ran: no output, no count.
    expect(await other.eval(outputText)).toBe("");
    expect(await other.eval(firstCount)).toBe("[ ]");
    expect(await other.errors()).toEqual([]);
  } finally {
    await other.close();
  }
});

test("a widget protocol round trip from a host on another origin", async ({ page2: page, hostOrigin }) => {
  await page.goto(`${hostOrigin}/?frame=`);
  const ofType = (type: string) => `window.received.filter((m) => m.data && m.data.type === ${js(type)})`;
  await waitFor(page, `${ofType("ready")}.length > 0`);
  await page.eval(`window.send(0, { kiln: 1, type: "run", id: "r1", code: "print('from the host')\\n6 * 7" })`);
  await waitFor(page, `${ofType("result")}.length > 0`);
  const result = await page.eval<{ status: string; value: Record<string, string> }>(`${ofType("result")}[0].data`);
  expect(result.status).toBe("ok");
  expect(result.value["text/plain"]).toBe("42");
  expect(await page.eval(`${ofType("stream")}.map((m) => m.data.text).join("")`)).toContain("from the host");
});

test("one chat turn with a tool call", async ({ page2: page, engineName }) => {
  const key = `sk-test-engines-${engineName}-${Math.random().toString(36).slice(2, 8)}`;
  await script(key, [
    { content: [{ type: "tool_use", name: "python", input: { code: "print(sum([2, 4, 6]) / 3)" } }] },
    { content: [{ type: "text", text: "The mean is 4.0." }] },
  ]);
  await page.goto(`${base()}/#/chat`);
  await click(page, "Settings");
  // Anthropic's group is folded until its line is clicked.
  const toggle = `[...document.querySelectorAll("fieldset")].find((f) => f.querySelector("legend")?.textContent === "Anthropic").querySelector("button[aria-expanded]")`;
  await page.eval(`${toggle}.click()`);
  await waitFor(page, `${toggle}.getAttribute("aria-expanded") === "true" && ${labelled("API key")}.getClientRects().length > 0`);
  await fill(page, labelled("API key"), key);
  await fill(page, labelled("Base URL"), apiBase());
  await click(page, "Save");
  await waitFor(page, `!document.querySelector("dialog[open]")`);
  await fill(page, `document.querySelector("textarea[aria-label=Message]")`, "What is the mean of 2, 4 and 6?");
  await click(page, "Send");
  await waitFor(page, `document.querySelector("[aria-label=Messages]")?.textContent.includes("The mean is 4.0.")`);
  expect(await page.eval(`document.querySelector("[aria-label='Python cell']").textContent`)).toContain("4.0");
});

test("offline reload", async ({ engine }) => {
  // A server of its own, so that it can go away: the app must then come from the service worker.
  const port = await freePort();
  const server = spawn("npx", ["vite", "preview", "--port", String(port), "--strictPort", "--bypass-lock"], { stdio: "ignore", detached: true });
  const page = await engine.newPage({ serviceWorkers: true });
  try {
    const url = `http://localhost:${port}/#/playground`;
    await expect.poll(async () => (await fetch(url).catch(() => null))?.ok ?? false, { timeout: 30_000 }).toBe(true);
    await page.goto(url);
    await waitFor(page, `${statusText}.includes("Python ready")`);
    await waitFor(page, "navigator.serviceWorker && navigator.serviceWorker.controller");
    // The first visit's snapshot is stored after "Python ready": a reload before that starts afresh.
    await expect.poll(() => page.eval<number>(STORED_SNAPSHOTS), { timeout: 60_000, intervals: [200] }).toBe(1);
    process.kill(-server.pid!);
    await expect.poll(async () => (await fetch(url).catch(() => null)) === null, { timeout: 10_000 }).toBe(true);
    await page.reload();
    await waitFor(page, `${statusText}.includes("Python ready")`);
    expect(await page.eval(`document.querySelector("[role=status]").dataset.boot`)).toBe("snapshot");
    expect(await runCell(page, "print('offline', 6 * 7)")).toContain("offline 42");
  } finally {
    await page.close();
    try {
      process.kill(-server.pid!);
    } catch {
      // Already gone.
    }
  }
});

/** A WebAssembly module whose export `spin` loops for ever. */
const SPIN_WASM = [0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 7, 8, 1, 4, 115, 112, 105, 110, 0, 0, 10, 9, 1, 7, 0, 3, 64, 12, 0, 11, 11];

/**
 * Workers that spin in WebAssembly, plainly or through stack switching (JSPI, as Pyodide runs
 * Python where it can); the second catches the call's rejection and prevents every error event.
 */
const SPINNING_WORKERS: Record<string, string> = {
  "/plain.js": `onmessage = (e) => {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(e.data)));
    postMessage("spinning");
    instance.exports.spin();
  };`,
  "/switching.js": `addEventListener("unhandledrejection", (e) => e.preventDefault());
  addEventListener("error", (e) => e.preventDefault());
  onmessage = async (e) => {
    if (!("promising" in WebAssembly)) return postMessage("no stack switching");
    const instance = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(e.data)));
    postMessage("spinning");
    try {
      await WebAssembly.promising(instance.exports.spin)();
    } catch {
      // Nothing to report.
    }
  };`,
};

/** What Firefox reports, uncaught, when a worker is terminated inside stack switching. */
const STACK_SWITCH_TERMINATED = "pageerror: uncaught exception: undefined";

test("a worker terminated inside WebAssembly stack switching makes Firefox report an uncaught error; Kiln's Python runs without stack switching there", async ({ engine, engineName }) => {
  const server = createServer((request, response) => {
    const worker = SPINNING_WORKERS[request.url ?? ""];
    response.setHeader("content-type", worker ? "text/javascript" : "text/html");
    response.end(worker ?? "<!doctype html><title>Workers</title>");
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  // Its own page: the errors it makes are what this test looks for.
  const page = await engine.newPage();
  try {
    await page.goto(`http://127.0.0.1:${port}/`);
    // Started, seen spinning, terminated; the page's own handlers see no error either.
    const spinAndTerminate = (path: string) =>
      page.eval<string>(`new Promise((resolve) => {
        const worker = new Worker(${js(path)});
        worker.onerror = () => resolve("error event");
        worker.onmessage = (event) => {
          if (event.data !== "spinning") return resolve(event.data);
          setTimeout(() => { worker.terminate(); setTimeout(() => resolve("terminated"), 500); }, 300);
        };
        worker.postMessage(${js(SPIN_WASM)});
      })`);
    expect(await spinAndTerminate("/plain.js")).toBe("terminated");
    expect(await page.errors()).toEqual([]);
    const switching = await spinAndTerminate("/switching.js");
    if (engineName === "firefox") {
      expect(switching).toBe("terminated");
      // Only the worker inside stack switching makes the report, in spite of its handlers.
      await expect.poll(() => page.errors(), { timeout: 10_000 }).toEqual([STACK_SWITCH_TERMINATED]);
    } else {
      // WebKit has no stack switching, and reports nothing.
      expect(switching).toBe("no stack switching");
      expect(await page.errors()).toEqual([]);
    }
    // Kiln's Python never runs inside stack switching, so a hard stop (a terminated worker,
    // "soft stop, hard stop with restore…" above, which fails on any page error) reports nothing.
    const reported = (await page.errors()).length;
    await openPlayground(page, base());
    expect(await runCell(page, "import js, pyodide.ffi; print(hasattr(js.WebAssembly, 'promising'), pyodide.ffi.can_run_sync())")).toContain("False False");
    expect((await page.errors()).slice(reported)).toEqual([]);
  } finally {
    await page.close();
    server.close();
  }
});

// Cells of a page made by embed.js, on a host of another site, driven through protocol version 1
// (the host's own scripts are all an evaluated script can reach: the cells are frames of Kiln's origin).
// Playwright reads a fixture's dependencies from its first parameter: here, none.
// eslint-disable-next-line no-empty-pattern
const cellTest = test.extend<object, { cellPages: CellPages }>({ cellPages: [({}, use) => serveCellPages(use), { scope: "worker" }] });

const fromCell = (frame: number, type: string) => `window.received.filter((m) => m.frame === ${frame} && m.data && m.data.kiln === 1 && m.data.type === ${js(type)})`;

/** Opens a page of cells and waits until each of its `count` frames has laid itself out (and so listens to the page). */
async function openCells(page: EnginePage, url: string, count: number): Promise<void> {
  await page.goto(url);
  for (let frame = 0; frame < count; frame++) await waitFor(page, `${fromCell(frame, "resize")}.length > 0`);
}

/** The host posts `run` to cell `frame` (0-based) and waits for its result. */
async function runInCell(page: EnginePage, frame: number, id: string, code: string): Promise<{ status: string; value?: Record<string, string> }> {
  await page.eval(`document.querySelectorAll("iframe.kiln-cell")[${frame}].contentWindow.postMessage({ kiln: 1, type: "run", id: ${js(id)}, code: ${js(code)} }, ${js(base())})`);
  await waitFor(page, `${fromCell(frame, "result")}.some((m) => m.data.id === ${js(id)})`, 120_000);
  return page.eval(`${fromCell(frame, "result")}.find((m) => m.data.id === ${js(id)}).data`);
}

cellTest("cells of a page share one session: a variable from one cell is seen in the other", async ({ page2: page, cellPages }) => {
  // The page has a frame of its own too (as a video or a form would be): the cells, looking for
  // each other among the page's frames, post nothing to it, which the browser would report as an
  // error in the page (a message whose target origin is not the frame's; see page2).
  const path = cellPages.add(
    `<pre class="kiln">x = 41</pre>\n<p>Then:</p>\n<pre class="kiln">print(x + 1)</pre>\n<pre class="kiln" data-kiln-session="apart">print('x' in globals())</pre>\n<iframe title="Not Kiln" srcdoc="<p>The page's own frame</p>"></iframe>`,
  );
  await openCells(page, cellPages.otherSite + path, 3);
  expect((await runInCell(page, 0, "a", "x = 41\nx")).value?.["text/plain"]).toBe("41");
  const second = await runInCell(page, 1, "b", "print(x + 1)\nx * 2");
  expect(second.status).toBe("ok");
  expect(second.value?.["text/plain"]).toBe("82");
  expect(await page.eval(`${fromCell(1, "stream")}.map((m) => m.data.text).join("")`)).toContain("42");
  // A named session of the same page is apart.
  expect((await runInCell(page, 2, "c", "'x' in globals()")).value?.["text/plain"]).toBe("False");
});

cellTest("an exercise's check fails, then passes, and the host gets each result", async ({ page2: page, cellPages }) => {
  const path = cellPages.add(`<pre class="kiln" id="total">def total(items):\n    return 0</pre>
<pre class="kiln" data-kiln-check>assert total([3, 4]) == 7, f"total([3, 4]) should be 7, not {total([3, 4])}"</pre>`);
  await openCells(page, cellPages.otherSite + path, 1);
  expect((await runInCell(page, 0, "try-1", "def total(items):\n    return 0")).status).toBe("ok");
  await waitFor(page, `${fromCell(0, "check")}.length === 1`);
  expect(await page.eval(`${fromCell(0, "check")}[0].data`)).toEqual({ kiln: 1, type: "check", id: "try-1", cell: "total", passed: false, message: "total([3, 4]) should be 7, not 0" });
  expect((await runInCell(page, 0, "try-2", "def total(items):\n    return sum(items)")).status).toBe("ok");
  await waitFor(page, `${fromCell(0, "check")}.length === 2`);
  expect(await page.eval(`${fromCell(0, "check")}[1].data`)).toEqual({ kiln: 1, type: "check", id: "try-2", cell: "total", passed: true, message: "Passed" });
});

let visits = 0;

/** Saves `url` as the Jupyter server in the app's settings (as Settings does) and loads the chat again: the page then narrows its policy to it. */
async function saveJupyterServer(page: EnginePage, url: string): Promise<void> {
  await page.eval(`new Promise((resolve, reject) => {
    const open = indexedDB.open("kiln");
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const put = db.transaction("settings", "readwrite").objectStore("settings").put({ jupyter: { url: ${js(url)} } }, "app");
      put.onsuccess = () => { db.close(); resolve(true); };
      put.onerror = () => { db.close(); reject(put.error); };
    };
  })`);
  // Not while the page still fetches Pyodide's files for its spare: a load cut short is reported as an error in Firefox.
  await waitFor(page, PYODIDE_FETCHED);
  // Loaded again at a new address: WebKit's WebDriver now and then failed to refresh a page whose Python was starting.
  await page.goto(`${base()}/?visit=${++visits}#/chat`);
  await waitFor(page, `document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content.includes(${js(new URL(url).host)})`);
}

/** The page has fetched Pyodide's WebAssembly, standard library and lock file (for its warm spare). */
const PYODIDE_FETCHED = `performance.getEntriesByType("resource").filter((entry) => /(pyodide\\.asm\\.wasm|python_stdlib\\.zip|pyodide-lock\\.json)$/.test(entry.name) && entry.responseEnd > 0).length >= 3`;

/** From the page: a WebSocket to each URL, and how each ended ("open", "error" or what it threw), with the policy violations seen. */
const openSockets = (urls: string[]) => `(async () => {
  const violations = [];
  const seen = (event) => violations.push(event.effectiveDirective + " " + event.blockedURI);
  document.addEventListener("securitypolicyviolation", seen);
  const outcomes = await Promise.all(${js(urls)}.map((url) => new Promise((resolve) => {
    try {
      const socket = new WebSocket(url);
      socket.onopen = () => (socket.close(), resolve("open"));
      socket.onerror = () => resolve("error");
    } catch (error) {
      resolve("threw " + error.name);
    }
  })));
  await new Promise((resolve) => setTimeout(resolve, 500));
  document.removeEventListener("securitypolicyviolation", seen);
  return { outcomes, violations };
})()`;

test("the page's policy lets a WebSocket reach the saved Jupyter server's origin and no other", async ({ engine }) => {
  const [saved, other] = await Promise.all([startSocketServer(), startSocketServer()]);
  const page = await engine.newPage();
  try {
    await page.goto(`${base()}/#/chat`);
    await waitFor(page, `document.querySelector('meta[http-equiv="Content-Security-Policy"]')`);
    // The attack is real: with the other server saved, the page reaches it.
    await saveJupyterServer(page, other.url);
    const control = `control-${Math.random().toString(36).slice(2)}`;
    expect((await page.eval<{ outcomes: string[] }>(openSockets([`ws://127.0.0.1:${other.port}/${control}`]))).outcomes).toEqual(["open"]);
    await expect.poll(() => other.hits).toContain(`/${control}`);
    // Another server saved: the saved one opens, the other is refused by the policy and never reached.
    await saveJupyterServer(page, saved.url);
    const attack = `attack-${Math.random().toString(36).slice(2)}`;
    const urls = [`ws://127.0.0.1:${saved.port}/${attack}`, `ws://127.0.0.1:${other.port}/${attack}`];
    const { outcomes, violations } = await page.eval<{ outcomes: string[]; violations: string[] }>(openSockets(urls));
    expect(outcomes[0]).toBe("open");
    expect(outcomes[1]).not.toBe("open");
    expect(violations).toEqual([`connect-src ${urls[1]}`]);
    expect(saved.hits).toContain(`/${attack}`);
    expect(other.hits.filter((hit) => hit.includes(attack))).toEqual([]);
    // Firefox also reports the refusal to the page as an error: that one, and no other error.
    const refusal = `(connect-src) at ${urls[1]}`;
    expect((await page.errors()).filter((error) => !error.includes(refusal))).toEqual([]);
  } finally {
    await page.close();
    await Promise.all([saved.stop(), other.stop()]);
  }
});
