/**
 * Start-up of a worker's interpreter: from the page's memory snapshot when there is one, a
 * normal boot otherwise (or when the snapshot fails), with Kiln's package in place, and a new
 * snapshot made when the page asks for one.
 */
import type { PyodideAPI } from "pyodide";
import type { BootKind, PageFetch, WorkerInit } from "./python-api";
import { WORKING_DIRECTORY } from "./file-paths";
import { routeFetchesThroughPage } from "./page-fetch";
import { restoreWithoutCopies, storedSnapshot, type RestoreOptions } from "./snapshot-restore";
import { withCompiledWasm } from "./wasm-early";
// Pyodide's JavaScript is part of the worker's own module (one self-contained file that the
// page hands over as text, see src/host/host-bootstrap.ts): nothing is imported at run time,
// which an opaque-origin worker cannot do from the app's origin.
import { loadPyodide } from "pyodide";
import createPyodideModule from "pyodide/pyodide.asm.mjs";

/** Kiln's Python package, as text, keyed by path (`./python/kiln/runner.py`). */
const kilnSources = import.meta.glob<string>("./python/kiln/*.py", {
  query: "?raw",
  import: "default",
  eager: true,
});

const KILN_LIB = "/lib/kiln-site";

/** Pyodide's options for the snapshot (experimental, underscore names; see src/runtime/boot-snapshot.ts). */
type SnapshotOptions = { _makeSnapshot?: boolean } | RestoreOptions;

/**
 * What a snapshot would freeze is made fresh after each restore: `random`'s seed (if a
 * module Kiln imports at start-up has loaded it). String hashing is not randomised in
 * Pyodide either way.
 */
const FRESH_AFTER_RESTORE = `
import sys
if "random" in sys.modules:
    sys.modules["random"].seed()
`;

export interface Booted {
  pyodide: PyodideAPI;
  boot: BootKind;
  /** Why a snapshot could not be restored. */
  note?: string;
  /** The new snapshot, when the page asked for one and Pyodide could make it. */
  snapshot?: { data: Blob | Uint8Array; checksum: string };
}

export interface BootSteps {
  /** Everything Pyodide fetches, through the page. */
  pageFetch: PageFetch;
  /** Pyodide's WebAssembly, compiled early (undefined: Pyodide compiles it). */
  compiledWasm: Promise<WebAssembly.Module | undefined>;
  /** Wires the worker's own hooks (output, input, Stop) into each interpreter as it loads. */
  prepare: (pyodide: PyodideAPI) => void;
}

/**
 * Starts Pyodide from the snapshot when there is one (any failure there is a normal boot
 * instead), puts Kiln's package on its path, and makes a snapshot of a normal boot if asked.
 * Kiln's hooks go in after that ({@link freshAfterBoot}).
 */
export async function bootPython(options: WorkerInit, steps: BootSteps): Promise<Booted> {
  const load = (snapshot: SnapshotOptions) => loadRuntime(options, steps, snapshot);
  const normal: SnapshotOptions = options.makeSnapshot ? { _makeSnapshot: true } : {};
  let booted: Booted;
  if (!options.snapshot) {
    booted = { pyodide: await load(normal), boot: "fresh" };
  } else {
    try {
      const pyodide = await load(restoreWithoutCopies(options.snapshot.data, options.snapshot.checksum));
      if (!pyodide.runPython(`import sys; "kiln.runner" in sys.modules`)) throw new Error("Kiln's package is missing from it");
      booted = { pyodide, boot: "snapshot" };
    } catch (error) {
      const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
      booted = { pyodide: await load(normal), boot: "fallback", note: `the snapshot could not be restored (${reason})` };
    }
  }
  installKilnPackage(booted.pyodide);
  if (booted.boot !== "snapshot" && options.makeSnapshot) {
    const snapshot = await makeSnapshot(booted.pyodide, options.sendBlobs ?? false);
    if (snapshot) booted.snapshot = snapshot;
  }
  return booted;
}

/** After Kiln's hooks are installed: what a restored snapshot would have frozen is made fresh. */
export function freshAfterBoot(booted: Booted): void {
  if (booted.boot === "snapshot") booted.pyodide.runPython(FRESH_AFTER_RESTORE);
}

/**
 * Firefox reports an uncaught `undefined` to the page whenever a worker is terminated while a
 * call through WebAssembly stack switching (JSPI) runs in it, which is every Python run of
 * Pyodide's where JSPI exists, so every hard stop; nothing in the worker or the page can catch
 * it. Kiln does not use stack switching (its runs are asyncio tasks, `input()` and sleep wait on
 * shared memory), so in Firefox Pyodide is started without it, as in WebKit, which has none:
 * Python there has no `pyodide.ffi.run_sync`. Called before Pyodide's factory first runs
 * (it reads what the engine has then).
 */
export function withoutStackSwitchingInFirefox(): void {
  if (!/\bFirefox\//.test(self.navigator.userAgent)) return;
  const wasm = WebAssembly as unknown as Record<string, unknown>;
  for (const name of ["Suspending", "Suspender", "promising"]) delete wasm[name];
}

/**
 * Runs Pyodide's module factory up to the point where it would instantiate the WebAssembly,
 * and leaves it there (nothing keeps it). The engine compiles the factory's megabyte of
 * code, which it otherwise does in the middle of each boot (in Chromium, about 120 ms of a
 * worker's start). Called while the worker waits for its ports; its settings are the least
 * the factory reads before it instantiates, and any error in it is of no consequence.
 */
export function warmUpFactory(): void {
  const settings = { API: { config: {}, runtimeEnv: {} }, preRun: [], instantiateWasm: () => ({}) };
  void (createPyodideModule as unknown as (settings: object) => Promise<unknown>)(settings).catch(() => undefined);
}

/**
 * Pyodide's files all come through the page (its service worker serves them offline; the
 * worker's own network may be off), through `fetch`.
 */
async function loadRuntime(options: WorkerInit, { pageFetch, compiledWasm, prepare }: BootSteps, snapshot: SnapshotOptions): Promise<PyodideAPI> {
  const lockDir = options.lockFileURL ? new URL(".", options.lockFileURL).href : "";
  routeFetchesThroughPage(pageFetch, [options.indexURL, options.packageBaseUrl, options.lockFileURL, lockDir]);
  const pyodide = await withCompiledWasm(compiledWasm, () =>
    loadPyodide({
      createPyodideModule,
      indexURL: options.indexURL,
      ...(options.lockFileURL ? { lockFileURL: options.lockFileURL } : {}),
      packageBaseUrl: options.packageBaseUrl,
      env: { HOME: WORKING_DIRECTORY, MPLBACKEND: "module://kiln.mpl_backend" },
      ...snapshot,
    }),
  );
  prepare(pyodide);
  return pyodide;
}

function installKilnPackage(pyodide: PyodideAPI): void {
  const fs = pyodide.FS;
  fs.mkdirTree(`${KILN_LIB}/kiln`);
  for (const [path, source] of Object.entries(kilnSources)) {
    fs.writeFile(`${KILN_LIB}/kiln/${path.split("/").pop()}`, source);
  }
  // A restored snapshot has it already.
  pyodide.runPython(`import sys\nif "${KILN_LIB}" not in sys.path: sys.path.insert(0, "${KILN_LIB}")`);
}

/**
 * A snapshot of this interpreter as booted, with Kiln's package and the modules it uses
 * imported, made before Kiln's hooks (functions of this worker) are installed and before
 * any code runs. Absent if Pyodide cannot make one.
 */
async function makeSnapshot(pyodide: PyodideAPI, asBlob: boolean): Promise<Booted["snapshot"]> {
  try {
    pyodide.runPython("import kiln.runner");
    const bytes = (pyodide as unknown as { makeMemorySnapshot(): Uint8Array<ArrayBuffer> }).makeMemorySnapshot();
    // A Blob reaches the page by reference; the page stores it as it is.
    return await storedSnapshot(bytes, asBlob);
  } catch (error) {
    console.warn("Python's start-up snapshot could not be made.", error);
    return undefined;
  } finally {
    // Booting for a snapshot wraps the worker's globals in Pyodide's path-tracking proxy, through
    // which getters such as `js.self.origin` fail: Python's `js` is the real global scope again.
    pyodide.registerJsModule("js", globalThis);
    (pyodide as unknown as { _api: { config: { jsglobals: unknown } } })._api.config.jsglobals = globalThis;
    pyodide.runPython("import sys; sys.modules.pop('js', None)");
  }
}
