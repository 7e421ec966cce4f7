/**
 * The code of a Python host frame: the frame that starts the page's Python workers of one
 * kind (with network, or without). The page makes the frame (`<iframe sandbox="allow-scripts"
 * srcdoc>`, see host-bootstrap.ts), so the frame and its workers have an opaque origin and the
 * app's Content-Security-Policy; without network, a policy added here before any worker starts
 * lets the workers fetch nothing from any host (policies only add up, and a `data:` worker takes its
 * creator's). No Python runs in this frame; it compiles Pyodide's WebAssembly once for all its
 * workers (from the bytes the page sends, never from a worker), keeps the files every start reads
 * (from the page, never from a worker) to give each new worker a copy before it runs anything,
 * starts each worker the page asks for, and relays Stop and `input()` answers into each worker's
 * shared memory.
 */
import type {
  FilesFromFrame,
  HostHere,
  HostCommand,
  HostFiles,
  HostLaunch,
  HostPrepared,
  HostReport,
  HostStart,
  StartFiles,
  WasmFromFrame,
  WorkerStart,
} from "../../workers/python-api";
import { isHostAsk, isHostFiles, isHostLaunch, isHostPrepare, isHostStart } from "../runtime/worker-guards";
import { answerStdin, clearInterrupt, createInterruptBuffer, createStdinBuffer, requestInterrupt, keepStopPending } from "../../workers/shared-buffers";
import { capabilities } from "../runtime/capabilities";
import { WORKER_BOOTSTRAP_URL } from "./host-bootstrap";
import { networkOffPolicy } from "./network-policy";
import { compileWasm } from "../../workers/wasm-early";

/**
 * The workers this frame started and their control ports, until the page ends them. Held
 * here: a port or a worker that nothing refers to may be collected, and with it the worker.
 */
const launched = new Set<{ worker?: Worker; control: MessagePort }>();

// The bootstrap keeps the page's start message (it checked that the page sent it).
const message: unknown = (globalThis as { kilnHostStart?: unknown }).kilnHostStart;
if (isHostStart(message)) start(message);

function start({ source, network, launcher }: HostStart): void {
  if (!network) forbidConnections();
  // Pyodide's WebAssembly, compiled from the first bytes the page sends and shared by every later worker.
  let compiledOnce: Promise<WebAssembly.Module | undefined> | undefined;
  const compiled = (body: Blob | null) => {
    if (compiledOnce || !body) return compiledOnce ?? Promise.resolve(undefined);
    const compiling = compileWasm(body);
    compiledOnce = compiling;
    // A compile that failed is tried again with the next worker's bytes.
    void compiling.then((module) => module || (compiledOnce === compiling && (compiledOnce = undefined)));
    return compiling;
  };
  // The files the page last sent, once read; a newer message makes an older read moot.
  let files: StartFiles | undefined;
  let filesReceived = 0;
  const startFiles = () => files;
  // The next worker, its code loaded ahead of time when the page asked for that.
  let prepared: LoadingWorker | undefined;
  // While it waits, it gets its files as soon as there are some.
  const giveFilesAhead = (loading: LoadingWorker) =>
    loading.loaded.then((worker) => {
      if (files && typeof worker !== "string" && loading === prepared) giveFiles(loading, worker, files);
    });
  // The port queues what the page sends until this code listens.
  launcher.onmessage = (event: MessageEvent<unknown>) => {
    if (isHostLaunch(event.data)) {
      // A worker loaded ahead that failed while it waited is replaced, not reported.
      const loading = prepared ?? loadWorker(source);
      if (prepared) prepared.instead = () => loadWorker(source);
      prepared = undefined;
      launch(event.data, loading, compiled, startFiles);
    } else if (isHostPrepare(event.data)) {
      const loading = (prepared ??= loadWorker(source));
      void giveFilesAhead(loading).then(() => launcher.postMessage({ kilnPrepared: 1 } satisfies HostPrepared));
    } else if (isHostAsk(event.data)) {
      launcher.postMessage({ kilnHere: 1 } satisfies HostHere);
    } else if (isHostFiles(event.data)) {
      const received = ++filesReceived;
      void readFiles(event.data).then((read) => {
        if (received !== filesReceived) return;
        files = read;
        if (prepared) void giveFilesAhead(prepared);
      });
    }
  };
}

/** The Blobs of {@link HostFiles}, read here (this frame's thread is idle); undefined if they cannot be. */
async function readFiles({ stdlib, snapshot }: HostFiles): Promise<StartFiles | undefined> {
  try {
    const [stdlibBytes, snapshotBytes] = await Promise.all([stdlib?.data.arrayBuffer(), snapshot?.data.arrayBuffer()]);
    return {
      stdlib: stdlib && stdlibBytes ? { url: stdlib.url, data: stdlibBytes } : null,
      snapshot: snapshot && snapshotBytes ? { data: snapshotBytes, checksum: snapshot.checksum } : null,
    };
  } catch {
    return undefined;
  }
}

/** Gives `worker` its own copy of `files` (or null: it asks the page), once. */
function giveFiles(loading: LoadingWorker, worker: Worker, files: StartFiles | undefined): void {
  if (loading.filesGiven) return;
  loading.filesGiven = true;
  try {
    const stdlib = files?.stdlib ? { url: files.stdlib.url, data: files.stdlib.data.slice(0) } : null;
    const snapshot = files?.snapshot ? { data: files.snapshot.data.slice(0), checksum: files.snapshot.checksum } : null;
    const message: FilesFromFrame = { kilnFrameFiles: files ? { stdlib, snapshot } : null };
    worker.postMessage(message, [stdlib?.data, snapshot?.data].filter((bytes) => bytes !== undefined));
  } catch {
    // No memory for the copies: the worker asks the page, as it would without them.
    worker.postMessage({ kilnFrameFiles: null } satisfies FilesFromFrame);
  }
}

/**
 * A worker started from `source`, once its code has loaded (it then waits for its ports), or
 * why it could not start. An error before the worker is launched is kept for its launch.
 */
interface LoadingWorker {
  loaded: Promise<Worker | string>;
  /** The last error the worker reported before it was launched. */
  error?: string;
  /** Stops keeping its errors: its launch reports them from now on. */
  launched: AbortController;
  /** A worker loaded ahead: what to start instead if it failed before its launch. */
  instead?: () => LoadingWorker;
  /** It has had its {@link FilesFromFrame} (each worker gets one). */
  filesGiven?: boolean;
}

/** The worker's code from a `blob:` URL where the engine allows it, else as a `data:` URL. */
function loadWorker(source: string): LoadingWorker {
  const launched = new AbortController();
  const loading: LoadingWorker = { launched, loaded: Promise.resolve("The Python worker could not start.") };
  const run = (url: string): Worker | string => {
    try {
      const worker = new Worker(url, { type: "module", name: "kiln-python" });
      const failed = (event: ErrorEvent) => {
        event.preventDefault();
        loading.error = event.message || "The Python worker stopped unexpectedly.";
      };
      worker.addEventListener("error", failed, { signal: launched.signal });
      return worker;
    } catch (error) {
      return `The Python worker could not start: ${String(error)}`;
    }
  };
  const bootstrap = run(WORKER_BOOTSTRAP_URL);
  if (typeof bootstrap === "string") {
    loading.loaded = Promise.resolve(bootstrap);
    return loading;
  }
  loading.loaded = new Promise((resolve) => {
    // Whichever comes first: its answer, or an error (then kept in `loading.error`).
    let settled = false;
    bootstrap.addEventListener(
      "message",
      (event: MessageEvent<{ kilnBootstrap?: string } | null>) => {
        if (settled) return;
        settled = true;
        if (event.data?.kilnBootstrap === "loaded") return resolve(bootstrap);
        bootstrap.terminate();
        loading.error = undefined;
        resolve(run(`data:text/javascript,${encodeURIComponent(source)}`));
      },
      { once: true },
    );
    bootstrap.addEventListener(
      "error",
      () => {
        if (!settled) resolve(bootstrap);
        settled = true;
      },
      { once: true },
    );
  });
  bootstrap.postMessage(source);
  return loading;
}

/** Hands a worker its ports and serves its control port. */
function launch(
  ports: HostLaunch,
  loading: LoadingWorker,
  compiled: (body: Blob | null) => Promise<WebAssembly.Module | undefined>,
  files: () => StartFiles | undefined,
): void {
  const { control } = ports;
  const entry: { worker?: Worker; control: MessagePort } = { control };
  launched.add(entry);
  const report = (value: HostReport) => control.postMessage(value);
  // This worker's own: without shared memory, Stop replaces the worker and input() says why it cannot ask.
  const shared = capabilities.sharedMemory;
  const interruptBuffer = shared ? createInterruptBuffer() : undefined;
  const stdinBuffer = shared ? createStdinBuffer() : undefined;
  const start: WorkerStart = {
    kilnPort: ports.kilnPort,
    events: ports.events,
    fetch: ports.fetch,
    ...(interruptBuffer ? { interruptBuffer } : {}),
    ...(stdinBuffer ? { stdinBuffer } : {}),
  };
  // Compiled here while the worker starts and evaluates its megabyte of code, instead of after;
  // a worker after the first gets the module this frame compiled already.
  let bytesArrived: (body: Blob | null) => void = () => undefined;
  const module = new Promise<Blob | null>((resolve) => (bytesArrived = resolve)).then(compiled);
  // Ended by the page: no longer among those launched.
  const ended = () => !launched.has(entry);
  const adopt = (loading: LoadingWorker) =>
    void loading.loaded.then((loaded) => {
      loading.launched.abort();
      const failure = typeof loaded === "string" ? loaded : loading.error;
      if (typeof loaded === "string" || failure !== undefined || ended()) {
        if (typeof loaded !== "string") loaded.terminate();
        if (failure !== undefined && !ended()) {
          if (loading.instead) adopt(loading.instead());
          else report({ type: "worker-error", message: failure });
        }
        return;
      }
      entry.worker = loaded;
      loaded.addEventListener("error", (event) => {
        event.preventDefault();
        report({ type: "worker-error", message: event.message || "The Python worker stopped unexpectedly." });
      });
      loaded.postMessage(start, [ports.kilnPort, ports.events, ports.fetch]);
      giveFiles(loading, loaded, files());
      void module.then((compiledModule) => {
        try {
          loaded.postMessage({ kilnWasm: compiledModule ?? null } satisfies WasmFromFrame);
        } catch {
          // An engine that cannot send a compiled module to a worker: the worker compiles it.
          loaded.postMessage({ kilnWasm: null } satisfies WasmFromFrame);
        }
      });
    });
  adopt(loading);
  control.onmessage = (event: MessageEvent<HostCommand>) => {
    const command = event.data;
    switch (command?.type) {
      case "interrupt":
        if (interruptBuffer) requestInterrupt(interruptBuffer);
        if (stdinBuffer) answerStdin(stdinBuffer, null);
        return;
      case "clear-interrupt":
        if (interruptBuffer) clearInterrupt(interruptBuffer);
        report({ type: "answer", id: command.id, value: true });
        return;
      case "interrupt-pending":
        // Without an interrupt buffer, SIGINT is never seen. STOP_SEEN is a Stop that Python has seen.
        report({ type: "answer", id: command.id, value: !interruptBuffer || keepStopPending(interruptBuffer) });
        return;
      case "terminate":
        launched.delete(entry);
        entry.worker?.terminate();
        control.close();
        return;
      case "wasm":
        bytesArrived(command.body instanceof Blob ? command.body : null);
        return;
      case "answer-input":
        if (stdinBuffer) answerStdin(stdinBuffer, typeof command.text === "string" ? command.text : null);
        return;
    }
  };
  report({ type: "started", sharedMemory: shared });
}

/**
 * Python without network: a policy that lets nothing here, in a worker or in a worker's
 * worker fetch anything from any host, the app's origin included (see network-policy.ts).
 * Policies only add up, so nothing (and nobody in the worker) can lift it later; the worker,
 * started after it, inherits it. Pyodide's own files still arrive through the page. (In
 * development the worker's code is imported from the dev server, whose origin scripts may
 * then come from.)
 */
function forbidConnections(): void {
  const meta = document.createElement("meta");
  meta.httpEquiv = "Content-Security-Policy";
  meta.content = networkOffPolicy(import.meta.env.DEV ? new URL(import.meta.url).origin : undefined);
  document.head.append(meta);
}
