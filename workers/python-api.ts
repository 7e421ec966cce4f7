/**
 * The contract between the page and the Python worker. Both threads import this file;
 * it holds types only.
 */
import type { Cuts } from "./output-limits";

/** How a run ended. */
export type RunStatus = "ok" | "error" | "interrupted" | "timeout" | "crashed" | "unavailable";

/** IPython-style rich output: mime type → content (images base64-encoded). */
export type MimeBundle = Record<string, string>;

/**
 * The representations of a bundle cut to the output limits (workers/output-limits.ts), by MIME
 * type: each one's whole length, and the whole value as a file (a Blob, or its bytes where
 * Blobs do not arrive whole, see {@link WorkerInit.sendBlobs}).
 */
export type SentCuts = Cuts<Blob | Uint8Array>;

export interface PythonError {
  ename: string;
  evalue: string;
  /** The formatted traceback, without Pyodide's internal frames. */
  traceback: string;
}

/** Which of the session's names came back after its worker was replaced. */
export interface RestoreReport {
  kept: string[];
  lost: string[];
  /** Cells whose replay had to be interrupted, as `[filename, source]` without the definitions that never finished. */
  cells?: [string, string][];
}

export interface RunResult {
  status: RunStatus;
  /** The last expression's value, when there was one and it was not suppressed by `;`. */
  value?: MimeBundle;
  /** What was cut from `value` to the output limits. */
  valueCut?: SentCuts;
  error?: PythonError;
  /** Set when the code called `sys.exit()`. */
  exitCode?: number;
  /** Modules the code imports that exist nowhere Kiln can load them (status `unavailable`). */
  missingModules?: string[];
  /** Packages loaded from the lock file before the run. */
  loadedPackages?: string[];
  /** Bytes of output dropped after the per-run cap. */
  truncatedBytes?: number;
  durationMs: number;
  restored?: RestoreReport;
  /** Set by the page: stopped while it waited its turn, so none of it ran. */
  notStarted?: boolean;
  /** Set by the page: ended by a Restart, which cleared the variables. */
  restarted?: boolean;
  /** Set by the page: variables this run made that are not kept, past the limit of saved variables. */
  variablesNotKept?: number;
}

export type StreamName = "stdout" | "stderr";

/** What the worker tells the page while a run goes on, in order. */
export type WorkerEvent =
  | { type: "stream"; name: StreamName; text: string }
  /**
   * `cut`: what was cut from `data` to the output limits. `displayId`: the id Python gave the
   * display (`display(obj, display_id=…)`), by which an `update-display` replaces it later.
   */
  | { type: "display"; data: MimeBundle; cut?: SentCuts; displayId?: string }
  /** Replace, in place, the run's displays shown with `displayId` (`update_display`); nothing is added. */
  | { type: "update-display"; displayId: string; data: MimeBundle; cut?: SentCuts }
  /** Clear what the run has shown so far (`clear_output`; with `wait=True` the worker sends it when the next output comes). */
  | { type: "clear-output" }
  | { type: "progress"; message: string }
  | { type: "input-request"; prompt: string }
  | { type: "truncated"; limitBytes: number }
  /** Pyodide cannot go on (exit, wasm stack overflow, out of memory): replace the worker. */
  | { type: "fatal"; message: string }
  /** The last event of a run: everything the run produced has been posted before it. */
  | { type: "done" };

/** Stream text of one stream, as the worker posts it: `[stream, text]`. */
export type StreamRun = [name: StreamName, text: string];

/**
 * What the worker posts: the run's events, with the stream text of one flush in a single event,
 * its runs in the order they were written (text that switches between stdout and stderr at every
 * line is still one message, not one per line). The page unpacks it into `stream` events.
 */
export type PostedEvent = Exclude<WorkerEvent, { type: "stream" }> | { type: "streams"; runs: StreamRun[] };

export interface WorkerInit {
  /** Absolute URL of the folder holding Pyodide's core (ends with `/`). */
  indexURL: string;
  /** Absolute URL of a lock file to use instead of the core's own; empty for the default. */
  lockFileURL: string;
  /** Where packages named in the lock file are downloaded from. */
  packageBaseUrl: string;
  /**
   * A memory snapshot of a booted interpreter to start from (see src/runtime/boot-snapshot.ts),
   * with the checksum (xxHash64, hex) it was stored with: the worker streams it into the heap and checks it there.
   */
  snapshot?: { data: Blob | ArrayBuffer; checksum: string };
  /** Whether a worker that boots normally sends back a snapshot of itself, made before it runs anything. */
  makeSnapshot?: boolean;
  /** Whether Blobs sent to the page arrive whole (see {@link PythonWorkerApi.readsBlob}); else bytes. */
  sendBlobs?: boolean;
}

/** How a worker started: from a snapshot, a normal boot, or a normal boot after a snapshot failed. */
export type BootKind = "snapshot" | "fresh" | "fallback";

/**
 * The first message a Python worker receives, from the frame that starts it (see
 * {@link HostStart}). Ports and buffers only: nothing callable. A second message follows:
 * {@link WasmFromFrame}.
 */
export interface WorkerStart {
  /** The port the worker serves its {@link PythonWorkerApi} on (Comlink). */
  kilnPort: MessagePort;
  /** Where the worker posts {@link PostedEvent}s. */
  events: MessagePort;
  /** Where the worker asks the page for Pyodide's files: {@link FetchRequest} → {@link FetchReply}. */
  fetch: MessagePort;
  /**
   * Int32Array[1]: 2 (SIGINT) interrupts Python. Absent without shared memory: then only
   * the worker's replacement stops Python stuck in a loop.
   */
  interruptBuffer?: SharedArrayBuffer;
  /**
   * Header Int32Array[2] (state, byte length) then the UTF-8 answer; see shared-buffers.ts.
   * Absent without shared memory: `input()` then raises EOFError.
   */
  stdinBuffer?: SharedArrayBuffer;
}

/**
 * Page → host frame (src/host/python-host.ts), once: the frame's code, the workers' code, and
 * the port on which the page asks it to start workers ({@link HostLaunch}). The frame is
 * sandboxed (opaque origin); without `network`, its policy lets its workers connect nowhere.
 */
export interface HostStart {
  kilnHost: 1;
  /** The host frame's own code (one module). */
  hostSource: string;
  /** The worker's code (one module). */
  source: string;
  network: boolean;
  launcher: MessagePort;
}

/** Page → host frame, over `launcher`: start one more worker and hand it these ports. */
export interface HostLaunch {
  kilnLaunch: 1;
  control: MessagePort;
  kilnPort: MessagePort;
  events: MessagePort;
  fetch: MessagePort;
}

/**
 * Page → host frame, over `launcher`: load the next worker's code now, while nothing else is
 * starting, so that the next {@link HostLaunch} takes a worker that only has to boot Python.
 */
export interface HostPrepare {
  kilnPrepare: 1;
}

/** Host frame → page, over `launcher`, after each {@link HostPrepare}: the next worker's code has loaded (or failed to). */
export interface HostPrepared {
  kilnPrepared: 1;
}

/**
 * Page → host frame, over `launcher`, every second while the frame has workers: is the frame
 * still there (see src/runtime/frame-watch.ts)? Answered with a {@link HostHere}.
 */
export interface HostAsk {
  kilnAsk: 1;
}

/** Host frame → page, over `launcher`: the answer to a {@link HostAsk}. */
export interface HostHere {
  kilnHere: 1;
}

/**
 * Host frame → worker, after {@link WorkerStart}: Pyodide's WebAssembly module, compiled by the
 * frame while the worker starts, or null (the worker then compiles it itself).
 */
export interface WasmFromFrame {
  kilnWasm: WebAssembly.Module | null;
}

/**
 * Page → host frame, over `launcher`, each time they change: the files every start on the page
 * reads, Pyodide's standard library and the page's snapshot (with its checksum). The frame reads
 * them once and gives each worker a copy of its own before the worker is launched
 * ({@link FilesFromFrame}): a worker then reads no Blob while it boots.
 */
export interface HostFiles {
  kilnFiles: 1;
  stdlib: { url: string; data: Blob } | null;
  snapshot: { data: Blob; checksum: string } | null;
}

/** The bytes of {@link HostFiles}, as the frame keeps them and as each worker gets its copy. */
export interface StartFiles {
  stdlib: { url: string; data: ArrayBuffer } | null;
  snapshot: { data: ArrayBuffer; checksum: string } | null;
}

/**
 * Host frame → worker, once, before or with its {@link WorkerStart}: its own copy of the files
 * the frame keeps, or null (the worker asks the page for them). Before its launch, while no
 * Python has run in it; the worker still checks the snapshot against the checksum the page
 * gives it.
 */
export interface FilesFromFrame {
  kilnFrameFiles: StartFiles | null;
}

/** Page → host frame, over `control`. Those with an `id` are answered with a {@link HostReport} of that id. */
export type HostCommand =
  | { type: "interrupt" }
  | { type: "clear-interrupt"; id: number }
  | { type: "interrupt-pending"; id: number }
  | { type: "answer-input"; text: string | null }
  /** Pyodide's WebAssembly (the page's early fetch; null if it failed): the frame compiles it once for all its workers. */
  | { type: "wasm"; body: Blob | null }
  /** End the worker now. */
  | { type: "terminate" };

/** Host frame → page, over `control`. */
export type HostReport =
  /** The worker exists; `sharedMemory`: interrupts and `input()` work. */
  | { type: "started"; sharedMemory: boolean }
  | { type: "answer"; id: number; value: boolean }
  /** The worker died (out of memory, a failed start). */
  | { type: "worker-error"; message: string };

/** Worker → page over the fetch port: GET this URL. */
export interface FetchRequest {
  id: number;
  url: string;
}

/** Page → worker over the fetch port. A refused or failed fetch has `status` 0 and an `error`. */
export interface FetchReply {
  id: number;
  ok: boolean;
  status: number;
  contentType: string;
  /**
   * A Blob: it crosses into the worker's process by reference, where an ArrayBuffer would be
   * copied on the page's thread.
   */
  body: Blob | ArrayBuffer;
  error?: string;
}

/**
 * What changed in the session's state since the previous capture (or restore), captured after
 * a successful run in case the worker is replaced (a failed run's changes come with the next
 * successful one's). The page merges it into its {@link SessionSnapshot}: `values` replace or
 * add, `removed` names go, `dropped` names and module variables lose any earlier value, and
 * every other name keeps the value it had. A value the runs did not change is not sent again.
 *
 * Each value is one buffer: a top-level `bytes`/`bytearray`'s contents, or a protocol-5 pickle
 * with its out-of-band buffers, behind a small header (see `kiln/values.py`, `encode`). Older
 * snapshots hold plain pickles; both restore.
 */
export interface StateCapture {
  /**
   * Every user variable, sorted; sent only when the page may not have the full list (the first
   * capture, the first after a restore, a capture that looked at every variable). Names not in
   * it lose their values.
   */
  names?: string[];
  /** Variables deleted since the previous capture. */
  removed: string[];
  /** Encoded values of the variables that are new or changed, and pickle. */
  values: Record<string, Uint8Array>;
  /** Every variable holding a module: name → module name. */
  modules: Record<string, string>;
  /** Changed variables whose new value cannot be carried (does not pickle, or is too large): any earlier value is stale. */
  dropped: string[];
  /** Those of `dropped` too large to carry (a pickle that does not fit in memory). */
  tooLarge: string[];
  /** The cell's [filename, source] when it defines functions, classes or imports. */
  cell?: [string, string];
  /** The last cell number, so new cells never reuse a restored cell's name. */
  counter: number;
}

/** What a replacement worker needs to bring a session's state back. Kept by the page. */
export interface SessionSnapshot {
  /** [filename, source] of every successful cell with definitions, in run order. */
  cells: [string, string][];
  names: string[];
  /** Encoded values (as in {@link StateCapture}) of the names that pickle. */
  values: Record<string, Uint8Array>;
  modules: Record<string, string>;
  counter: number;
  /** Set by the page: how many of the interpreter's variables are not kept, past the limit (see `session-state.ts`). */
  notKept?: number;
}

export interface WorkerRunOutcome {
  result: RunResult;
  /** Present after a successful run. */
  capture?: StateCapture;
}

export interface RunOptions {
  /** Identifies the run, so a late cancel never reaches the next one. */
  runId: number;
  /** Whether `input()` may ask the person (false in chat: it raises EOFError). */
  allowInput: boolean;
  /** Output beyond this many bytes is dropped, with a notice. */
  outputLimitBytes: number;
}

export interface RuntimeInfo {
  pythonVersion: string;
  pyodideVersion: string;
  /** Import names that Pyodide's lock file provides. */
  lockImports: string[];
  boot: BootKind;
  /** Why a snapshot was not used (boot "fallback"). */
  bootNote?: string;
  /** A snapshot of the booted interpreter, when asked for one, with its checksum (xxHash64, hex); the page keeps it. */
  snapshot?: { data: Blob | Uint8Array; checksum: string };
}

/** A cell's top-level imports (those not guarded by `except ImportError`). */
export interface ImportReport {
  imports: string[];
  /** Those this interpreter can import right now (standard library, loaded, the person's files). */
  available: string[];
}

/** A file in the session's working directory. */
export interface FileInfo {
  /** Relative to the working directory, `/`-separated. */
  path: string;
  size: number;
  /** Last modification, ms since the epoch. */
  mtimeMs: number;
}

/**
 * A file's content as the page and the worker hand files over many at once: Blobs (the person's
 * uploads) are read by the worker itself; bytes are handed over, not copied.
 */
export interface FileData {
  path: string;
  data: Blob | ArrayBuffer;
}

/** A file's content as the worker gives it back ({@link PythonWorkerApi.readFiles}). */
export interface FileBytes {
  path: string;
  data: Uint8Array;
}

/** A response fetched by the page for the worker (see {@link PageFetch}). */
export interface FetchedFile {
  ok: boolean;
  status: number;
  contentType: string;
  body: Blob | ArrayBuffer;
}

/**
 * The page fetches Pyodide's files and packages for the worker: the worker's opaque origin
 * keeps it out of the service worker's reach, the page's fetches are served offline.
 */
export type PageFetch = (url: string) => Promise<FetchedFile>;

/** What the worker exposes over Comlink. */
export interface PythonWorkerApi {
  /**
   * Whether `probe` arrives whole: Blobs cross into the worker's process by reference where
   * an ArrayBuffer would be copied on the page's thread, but WebKit delivers them empty to an
   * opaque-origin worker; the page sends bytes there instead.
   */
  readsBlob(probe: Blob, expected: string): Promise<boolean>;
  init(options: WorkerInit): Promise<RuntimeInfo>;
  run(code: string, options: RunOptions): Promise<WorkerRunOutcome>;
  /** Cancel run `runId` if it is waiting in `await` (where SIGINT is not seen). */
  cancel(runId: number): boolean;
  /** Bring back a session's state in this (fresh) interpreter. */
  restore(snapshot: SessionSnapshot): Promise<RestoreReport>;
  /** What a cell imports, without running it. */
  imports(code: string): ImportReport;
  /** Every file under the working directory. */
  listFiles(): FileInfo[];
  readFile(path: string): Uint8Array;
  /**
   * Write (or with `append`, add to) a file, creating its folders. A relative path is
   * relative to the working directory; `..` never climbs out of the file system's root.
   */
  /** A Blob (a person's file) is read by the worker itself, so the page never holds its bytes. */
  writeFile(path: string, data: string | Uint8Array | Blob | ArrayBuffer, append?: boolean): Promise<void>;
  deleteFile(path: string): void;
  /** Many files at once, in one call: those that no longer exist are left out. */
  readFiles(paths: string[]): FileBytes[];
  /** Write many files at once (a new worker's files, another tab's), creating their folders. */
  writeFiles(files: FileData[]): Promise<void>;
  deleteFiles(paths: string[]): void;
}
