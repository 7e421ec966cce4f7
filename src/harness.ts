/**
 * `harness.html`: the runtime API on `window.kiln`, with no interface around it, so the
 * benchmark and browser tests can drive sessions directly.
 *
 * `harness.html?start=session` starts a `PythonSession` as the page loads, `?start=bare` a
 * bare `loadPyodide()` worker, and `?start=compile` a worker that only compiles Pyodide's
 * WebAssembly (the least any start of Pyodide does); `window.kiln.started` then resolves with
 * the time (ms since navigation) at which it was done, and `startedAt` holds it.
 */
import { PythonSession } from "./runtime/python-session";
import { WorkerHandle, pyodideIndexUrl } from "./runtime/python-worker";
import { sparesLoaded, sparesReady, takeWorker } from "./runtime/spares";
import { bootCounts } from "./runtime/boot-snapshot";
import { sessionConfig } from "./runtime/session-config";
import { DEFAULT_SETTINGS, loadSettings, saveSettings } from "./storage/settings";
import { deleteStoredFiles, readStoredFiles, storeFiles } from "./storage/files";
import { addNotebook, notebookScope } from "./storage/notebooks";
import { newCell, newNotebook } from "./notebook/model";

/**
 * A worker that only runs `loadPyodide()` from Kiln's own copy, with the npm package's own
 * standard library (Kiln's has bytecode added: vite/stdlib-bytecode.ts), then runs each code
 * message it gets.
 */
const bareSource = (indexURL: string) => `
const { loadPyodide } = await import(${JSON.stringify(`${indexURL}pyodide.mjs`)});
const py = await loadPyodide({ indexURL: ${JSON.stringify(indexURL)}, stdLibURL: ${JSON.stringify(`${indexURL}stock/python_stdlib.zip`)} });
postMessage({ loaded: true });
onmessage = async (e) => {
  try { postMessage({ value: String(await py.runPythonAsync(e.data)) }); }
  catch (error) { postMessage({ error: String(error) }); }
};`;

/** A worker that only fetches and compiles Pyodide's WebAssembly, as a bare `loadPyodide()` does first. */
const compileSource = (indexURL: string) => `
await WebAssembly.compileStreaming(fetch(${JSON.stringify(`${indexURL}pyodide.asm.wasm`)}));
postMessage({ loaded: true });`;

/**
 * A bare `loadPyodide()` in a `data:` module worker, the baseline the benchmark compares
 * against: resolves once Pyodide has loaded, with the worker (post code to it; it answers
 * `{value}` or `{error}`) and the milliseconds from creating it. With `compileOnly`, the
 * worker only compiles Pyodide's WebAssembly (and runs no code).
 */
async function bareWorker(compileOnly = false): Promise<{ worker: Worker; loadedMs: number }> {
  const started = performance.now();
  const source = (compileOnly ? compileSource : bareSource)(pyodideIndexUrl());
  const worker = new Worker(`data:text/javascript,${encodeURIComponent(source)}`, { type: "module" });
  await new Promise<void>((resolve, reject) => {
    worker.onmessage = () => resolve();
    worker.onerror = (event) => reject(new Error(event.message || "The bare worker failed."));
  });
  return { worker, loadedMs: performance.now() - started };
}

const config = sessionConfig(DEFAULT_SETTINGS, { allowInput: false, network: true });

/** What `?start=` asked for, started at once; resolves with the time Python was ready. */
function startFromUrl(): Promise<number> | undefined {
  const start = new URLSearchParams(location.search).get("start");
  const ready =
    start === "session"
      ? new PythonSession(config).ready.then(() => undefined)
      : start === "bare"
        ? bareWorker().then(() => undefined)
        : start === "compile"
          ? bareWorker(true).then(() => undefined)
          : undefined;
  return ready?.then(() => (harness.startedAt = performance.now()));
}

const harness = {
  PythonSession,
  /** One worker of its own (no spare taken), e.g. to time a worker's start-up. */
  WorkerHandle,
  /** The warm spare for a configuration when there is one, else a new worker. */
  takeWorker,
  pyodideIndexUrl,
  sparesReady,
  sparesLoaded,
  /** How this page's workers started: from the snapshot, a normal boot, or a fallback. */
  bootCounts,
  bareWorker,
  /** The settings the app pages read (same origin, same IndexedDB), e.g. to raise the output limit. */
  loadSettings,
  saveSettings,
  /** The person's files as the app keeps them (same origin, same IndexedDB), e.g. to start a page with many. */
  storeFiles,
  readStoredFiles,
  deleteStoredFiles,
  /** Notebooks as the Playground keeps them, e.g. to open one of 500 cells. */
  addNotebook,
  newNotebook,
  newCell,
  notebookScope,
  /** The default configuration; `input()` off, as nobody is there to answer. */
  defaultConfig: config,
  started: undefined as Promise<number> | undefined,
  startedAt: undefined as number | undefined,
};

declare global {
  interface Window {
    kiln: typeof harness;
  }
}

window.kiln = harness;
harness.started = startFromUrl();
harness.started?.catch((error: unknown) => console.error("The harness could not start Python.", error));
