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
  /** The last event of a run: everything the run produced has been posted before it. */
  | { type: "done" };

export interface WorkerInit {
  /** Absolute URL of the folder holding Pyodide's core (ends with `/`). */
  indexURL: string;
  /** Absolute URL of a lock file to use instead of the core's own; empty for the default. */
  lockFileURL: string;
  /** Where packages named in the lock file are downloaded from. */
  packageBaseUrl: string;
  /** Int32Array[1]: the page writes 2 (SIGINT) to interrupt. */
  interruptBuffer: SharedArrayBuffer;
  /** Header Int32Array[2] (state, byte length) then the UTF-8 answer; see shared-buffers.ts. */
  stdinBuffer: SharedArrayBuffer;
  /** Where the worker posts {@link WorkerEvent}s. */
  events: MessagePort;
}

export interface RunOptions {
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
  run(code: string, options: RunOptions): Promise<RunResult>;
}
