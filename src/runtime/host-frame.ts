/**
 * The page's Python host frames: sandboxed frames with an opaque origin that start its Python
 * workers (see src/host/python-host.ts), one per kind (with network, or without).
 */
import workerUrl from "../../workers/python.worker.ts?worker&url";
import hostUrl from "../host/python-host.ts?worker&url";
import { HOST_SRCDOC } from "../host/host-bootstrap";
import type { HostAsk, HostFiles, HostPrepare, HostStart } from "../../workers/python-api";
import { isHostHere, isHostPrepared } from "./worker-guards";
import { watchFrame } from "./frame-watch";

const sources = new Map<string, Promise<string>>();

/**
 * A module's code, to be run from a `blob:` or `data:` URL in a host frame (which cannot
 * fetch it: its network may be off). Built modules are self-contained; the page fetches them
 * (the service worker serves them offline). In dev, where a module imports others, the code
 * imports it instead.
 */
function moduleSource(url: string): Promise<string> {
  const moduleUrl = new URL(url, location.href).href;
  if (import.meta.env.DEV) return Promise.resolve(`import ${JSON.stringify(moduleUrl)};`);
  let source = sources.get(moduleUrl);
  if (!source) {
    source = fetch(moduleUrl).then((response) => {
      if (!response.ok) throw new Error(`Could not load Python's code (${response.status}).`);
      return response.text();
    });
    sources.set(moduleUrl, source);
    source.catch(() => sources.delete(moduleUrl));
  }
  return source;
}

/**
 * A sandboxed frame that starts the page's Python workers of one kind (with network, or
 * without: its policy is fixed). It compiles Pyodide's WebAssembly once, so every worker after
 * the first starts without compiling it. It runs no Python: ending a worker leaves it as it was.
 */
export interface HostFrame {
  element: HTMLIFrameElement;
  /** Where the page asks the frame for a worker, once the frame runs its code. */
  launcher: Promise<MessagePort>;
  /**
   * Calls `listener` once the frame has stopped answering (see frame-watch.ts): its process
   * died, and every worker in it with it. Returns the call that stops listening: a worker that
   * ends first lets go, so that the frame, which lasts, keeps nothing of it (nor of its session).
   */
  onLost(listener: (reason: Error) => void): () => void;
  /** Workers of this page alive in it, shown on the element as `data-workers`. */
  workers: number;
  /** One more worker (+1) or one fewer (-1); a forgotten frame goes with its last worker. */
  count(change: 1 | -1): void;
  /** It keeps the next worker's code loaded ({@link loadWorkersAhead}). */
  loadsAhead?: boolean;
  /** Until the frame says the next worker's code has loaded, after the page last asked. */
  loadingAhead?: Promise<void>;
  /** Called when the frame says so (the next worker's code has loaded). */
  onPrepared?: () => void;
  /** Ends the questions of frame-watch.ts, once the frame is removed. */
  stopWatching?: () => void;
  /** It failed to start: no new worker goes to it, and it goes once its last worker has. */
  forgotten?: boolean;
  /** The files it keeps, or is to keep once it loads workers ahead ({@link keepFilesInFrame}). */
  files?: { stdlib: HostFiles["stdlib"]; snapshot: HostFiles["snapshot"]; sent: boolean };
}

const hostFrames = new Map<boolean, HostFrame>();

/**
 * V8's compile hint (other engines ignore it): compile every function of the worker's code as
 * the code is evaluated, instead of each on its first call. A worker's code is evaluated while
 * it waits (loaded ahead) or while the frame compiles the WebAssembly, so the functions that
 * Pyodide's start-up and a first run call are compiled before they are needed: in Chromium, a
 * spare loaded 30 ms sooner and recovery after a deadline took 20 ms less, with no change to a
 * page's first start.
 */
const COMPILE_EVERY_FUNCTION = "//# allFunctionsCalledOnLoad";

export function hostFrame(network: boolean): HostFrame {
  const existing = hostFrames.get(network);
  if (existing) return existing;
  const element = document.createElement("iframe");
  // Out of sight, but not `hidden`: Chromium backgrounds the process of a cross-origin frame
  // that is not rendered (display: none), which on Linux lowers its main thread's priority
  // (nice 5). That thread is the frame's own: it relays Stop and input() answers, tells the
  // page whether Python has seen a Stop, and starts the next worker. (Workers' threads keep
  // their priority either way.)
  Object.assign(element.style, { position: "fixed", top: "0", left: "0", width: "0", height: "0", border: "0" });
  element.tabIndex = -1;
  element.setAttribute("aria-hidden", "true");
  element.title = "Python";
  element.setAttribute("sandbox", "allow-scripts");
  element.setAttribute("allow", "cross-origin-isolated");
  element.srcdoc = HOST_SRCDOC;
  const loaded = new Promise<void>((resolve) => element.addEventListener("load", () => resolve(), { once: true }));
  document.body.append(element);
  // The frame waits for these two texts (1.2 MB, from the HTTP cache on a repeat visit): asked
  // for before Pyodide's own files, so that they are not read behind the 10 MB of WebAssembly.
  const sources = Promise.all([moduleSource(hostUrl), moduleSource(workerUrl)]);
  const listeners = new Set<(reason: Error) => void>();
  let lostWith: Error | undefined;
  const lose = (reason: Error) => {
    lostWith = reason;
    for (const listener of listeners) {
      // Each worker in the frame is told, whatever another's listener does.
      try {
        listener(reason);
      } catch (error) {
        console.error(error);
      }
    }
    listeners.clear();
  };
  const launcher = Promise.all([sources, loaded]).then(([[hostSource, source]]) => {
    const { port1, port2 } = new MessageChannel();
    const start: HostStart = { kilnHost: 1, hostSource, source: `${COMPILE_EVERY_FUNCTION}\n${source}`, network, launcher: port2 };
    // The frame's origin is opaque, so "*": it is our own frame, just created.
    element.contentWindow?.postMessage(start, "*", [port2]);
    // Until it is removed (a frame forgotten before now may have been already).
    const watch = element.isConnected
      ? watchFrame(
          () => port1.postMessage({ kilnAsk: 1 } satisfies HostAsk),
          () => {
            forgetHostFrame(host);
            lose(new Error(FRAME_LOST));
          },
        )
      : undefined;
    host.stopWatching = () => watch?.stop();
    port1.onmessage = (event: MessageEvent<unknown>) => {
      if (isHostHere(event.data)) watch?.heard();
      else if (isHostPrepared(event.data)) host.onPrepared?.();
    };
    return port1;
  });
  const host: HostFrame = {
    element,
    launcher,
    onLost: (listener) => {
      if (lostWith) {
        const reason = lostWith;
        queueMicrotask(() => listener(reason));
        return () => undefined;
      }
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    workers: 0,
    count: (change) => {
      host.workers += change;
      element.setAttribute("data-workers", String(host.workers));
      if (host.forgotten && host.workers <= 0) removeFrame(host);
    },
  };
  // Its code could not be had: the next worker tries a new frame.
  launcher.catch(() => forgetHostFrame(host));
  hostFrames.set(network, host);
  return host;
}

/** What a run that the frame's death ended reads ("Python crashed: …"). */
const FRAME_LOST = "its sandbox stopped responding, most likely out of memory";

/** A frame that failed to start, or was lost: removed once no worker of it is left, and never used again. */
export function forgetHostFrame(host: HostFrame): void {
  host.forgotten = true;
  for (const [network, known] of hostFrames) if (known === host) hostFrames.delete(network);
  if (host.workers <= 0) removeFrame(host);
}

function removeFrame(host: HostFrame): void {
  host.stopWatching?.();
  host.element.remove();
}

/**
 * Has the frame of this kind keep the code of its next worker loaded (about a megabyte to
 * evaluate), so that a worker started there only has to boot Python. The frame loads the
 * next one now, and again each time one of its workers is ready (when the processor is
 * usually free again). For a page that keeps spares: called once its spare has loaded.
 */
export function loadWorkersAhead(network: boolean): void {
  const host = hostFrames.get(network);
  // Once it does, each of its workers asks again as it is ready.
  if (!host || host.loadsAhead) return;
  host.loadsAhead = true;
  sendFiles(host);
  workerReady(host);
}

/**
 * Has the frame keep the files every start on the page reads (Pyodide's standard library, the
 * page's snapshot), to give each next worker its own copy before it is launched: reading a Blob
 * in a booting worker waits while its thread sets up Pyodide, and cost a start about 70 ms.
 * Sent again only when they change (a snapshot made, or given up), and only to a frame that
 * loads workers ahead (a page that keeps spares): a widget that never runs code would hold
 * 20 MB for nothing.
 */
export function keepFilesInFrame(host: HostFrame, stdlib: HostFiles["stdlib"], snapshot: HostFiles["snapshot"]): void {
  const known = host.files;
  if (known && known.stdlib?.data === stdlib?.data && known.snapshot?.checksum === snapshot?.checksum) return;
  host.files = { stdlib, snapshot, sent: false };
  sendFiles(host);
}

function sendFiles(host: HostFrame): void {
  const files = host.files;
  if (!files || files.sent || !host.loadsAhead || host.forgotten) return;
  files.sent = true;
  void host.launcher.then(
    (launcher) => launcher.postMessage({ kilnFiles: 1, stdlib: files.stdlib, snapshot: files.snapshot } satisfies HostFiles),
    () => undefined,
  );
}

/** One of `host`'s workers is ready: the frame loads the next one's code, if the page wants it. */
export function workerReady(host: HostFrame): void {
  if (!host.loadsAhead || host.forgotten) return;
  host.loadingAhead = host.launcher.then(
    (launcher) =>
      new Promise<void>((resolve) => {
        host.onPrepared = resolve;
        launcher.postMessage({ kilnPrepare: 1 } satisfies HostPrepare);
        // A frame that never answers holds up no one for long.
        setTimeout(resolve, AHEAD_ANSWER_MS);
      }),
    () => undefined,
  );
}

/** How long {@link workersAheadLoaded} waits for a frame's answer at most. */
const AHEAD_ANSWER_MS = 10_000;

/** Resolves once every frame has loaded the worker it was last asked to load ahead (for benchmarks and tests that time on a quiet page). */
export async function workersAheadLoaded(): Promise<void> {
  await Promise.all([...hostFrames.values()].map((host) => host.loadingAhead));
}
