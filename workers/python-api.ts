/**
 * The contract between the page and the Python worker. Both threads import this file;
 * it holds types only.
 */

/** How a run ended. */
export type RunStatus = "ok" | "error" | "interrupted" | "timeout" | "crashed" | "unavailable";

/** IPython-style rich output: mime type → content (images base64-encoded). */
export type MimeBundle = Record<string, string>;

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
}

export interface RunResult {
  status: RunStatus;
  /** The last expression's value, when there was one and it was not suppressed by `;`. */
  value?: MimeBundle;
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
}

export type StreamName = "stdout" | "stderr";

/** What the worker tells the page while a run goes on, in order. */
export type WorkerEvent =
  | { type: "stream"; name: StreamName; text: string }
  | { type: "display"; data: MimeBundle }
  | { type: "progress"; message: string }
  | { type: "input-request"; prompt: string }
  | { type: "truncated"; limitBytes: number }
  /** Pyodide cannot go on (exit, wasm stack overflow, out of memory): replace the worker. */
  | { type: "fatal"; message: string }
  /** The last event of a run: everything the run produced has been posted before it. */
  | { type: "done" };

export interface WorkerInit {
  /** Absolute URL of the folder holding Pyodide's core (ends with `/`). */
  indexURL: string;
  /** Absolute URL of a lock file to use instead of the core's own; empty for the default. */
  lockFileURL: string;
  /** Where packages named in the lock file are downloaded from. */
  packageBaseUrl: string;
  /**
   * Int32Array[1]: the page writes 2 (SIGINT) to interrupt. Absent where the page is not
   * cross-origin isolated: then only the worker's replacement stops Python stuck in a loop.
   */
  interruptBuffer?: SharedArrayBuffer;
  /**
   * Header Int32Array[2] (state, byte length) then the UTF-8 answer; see shared-buffers.ts.
   * Absent where the page is not cross-origin isolated: `input()` then raises EOFError.
   */
  stdinBuffer?: SharedArrayBuffer;
  /** Where the worker posts {@link WorkerEvent}s. */
  events: MessagePort;
}

/** A successful run's view of the session's state, captured in case the worker is replaced. */
export interface StateCapture {
  /** Every user variable. */
  names: string[];
  /** Pickled values of those that pickle. */
  values: Record<string, Uint8Array>;
  /** Variables holding modules: name → module name. */
  modules: Record<string, string>;
  /** Variables too large to carry. */
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
  values: Record<string, Uint8Array>;
  modules: Record<string, string>;
  counter: number;
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
}

/** What the worker exposes over Comlink. */
export interface PythonWorkerApi {
  init(options: WorkerInit): Promise<RuntimeInfo>;
  run(code: string, options: RunOptions): Promise<WorkerRunOutcome>;
  /** Cancel run `runId` if it is waiting in `await` (where SIGINT is not seen). */
  cancel(runId: number): boolean;
  /** Bring back a session's state in this (fresh) interpreter. */
  restore(snapshot: SessionSnapshot): Promise<RestoreReport>;
  /** Write a file (parent folders created); a relative path is relative to `/home/pyodide`. */
  writeFile(path: string, data: string | Uint8Array): void;
}
