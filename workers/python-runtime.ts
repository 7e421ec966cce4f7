import * as Comlink from "comlink";
import { capError, capPrompt } from "./text-limits";
import type { PyodideAPI } from "pyodide";
import type { PyProxy } from "pyodide/ffi";
import { fileBuffers, RunOutput } from "./run-output";
import type {
  FileBytes,
  FileData,
  FileInfo,
  ImportReport,
  PageFetch,
  PythonError,
  PythonWorkerApi,
  RestoreReport,
  RunOptions,
  RunResult,
  RuntimeInfo,
  SessionSnapshot,
  StartFiles,
  StateCapture,
  PostedEvent,
  WorkerInit,
  WorkerRunOutcome,
  WorkerStart,
} from "./python-api";
import { expectStdin, markStopSeen, markWaiting, STOP_SEEN, waitForStdin, waitingForStop } from "./shared-buffers";
import {
  deleteWorkingFile,
  deleteWorkingFiles,
  listWorkingFiles,
  readWorkingFile,
  readWorkingFiles,
  writeWorkingFile,
  writeWorkingFiles,
} from "./working-files";
import { askEarly, filesForStart, pageFetchOver, pyodideCoreFiles } from "./page-fetch";
import { bootPython, freshAfterBoot } from "./python-boot";
import { compileEarly } from "./wasm-early";

interface CellResult {
  status: "ok" | "error" | "interrupted";
  filename: string;
  value?: Record<string, string>;
  error?: PythonError;
  exit_code?: number;
}

const toObject = { dict_converter: Object.fromEntries };

/** Convert a Python result to JS and free the proxy. */
function take<T>(proxy: PyProxy): T {
  try {
    return proxy.toJs(toObject) as T;
  } finally {
    proxy.destroy();
  }
}

/**
 * The Python interpreter of one session, living in a worker. Start-up runs as named
 * steps; `run` executes one cell under the execution contract of DESIGN.md.
 */
export class PythonRuntime implements PythonWorkerApi {
  private pyodide!: PyodideAPI;
  private kiln!: PyProxy;
  /** kiln.stop: where a Stop seen outside the person's code goes (see stop.py). */
  private stop!: PyProxy;
  /** Absent without shared memory (no SharedArrayBuffer). */
  private readonly interrupt: Int32Array | undefined;
  private readonly stdinBuffer: SharedArrayBuffer | undefined;
  private readonly events: MessagePort;
  private pageFetch: PageFetch;
  /** Pyodide's WebAssembly, compiled while the snapshot is checked (see wasm-early.ts). */
  private compiledWasm: Promise<WebAssembly.Module | undefined> = Promise.resolve(undefined);
  private readonly output: RunOutput;
  /** Import name → lock file package providing it. */
  private lockImports = new Map<string, string>();
  /** The same, as a Python dict, made once (converting it took milliseconds of every run). */
  private lockImportsPy!: PyProxy;
  private allowInput = false;
  private runId = 0;

  constructor(
    start: WorkerStart,
    /** Pyodide's WebAssembly, compiled by the frame (undefined if it could not be). */
    private readonly compiledByFrame: Promise<WebAssembly.Module | undefined>,
    /** This worker's copy of the files a start reads, from the frame (null: the page sends them); taken once. */
    private filesFromFrame?: Promise<StartFiles | null>,
  ) {
    this.interrupt = start.interruptBuffer && new Int32Array(start.interruptBuffer);
    this.stdinBuffer = start.stdinBuffer;
    this.events = start.events;
    this.pageFetch = pageFetchOver(start.fetch);
    this.output = new RunOutput((event, transfer) => this.post(event, transfer));
  }

  /** The frame's files, once: nothing here keeps them after the boot has used them. */
  private takeFilesFromFrame(): Promise<StartFiles | null> | undefined {
    const files = this.filesFromFrame;
    this.filesFromFrame = undefined;
    return files;
  }

  async readsBlob(probe: Blob, expected: string): Promise<boolean> {
    return (await probe.text().catch(() => "")) === expected;
  }

  async init(options: WorkerInit): Promise<RuntimeInfo> {
    // Bytes from the frame are read already; a Blob from the page would be read while this
    // thread sets up Pyodide, which holds the reading up.
    this.output.sendBlobs = options.sendBlobs ?? false;
    const [wasm, ...others] = pyodideCoreFiles(options.indexURL, options.lockFileURL);
    const { early, snapshot: restore } = filesForStart(await this.takeFilesFromFrame(), others, options.snapshot, this.pageFetch);
    this.pageFetch = askEarly(this.pageFetch, early);
    this.compiledWasm = this.compiledByFrame.then((module) => module ?? compileEarly(this.pageFetch(wasm)));
    const booted = await bootPython({ ...options, snapshot: restore }, {
      pageFetch: this.pageFetch,
      compiledWasm: this.compiledWasm,
      prepare: (pyodide) => this.prepare(pyodide),
    });
    this.pyodide = booted.pyodide;
    this.initPackageIndex();
    this.initKernel();
    freshAfterBoot(booted);
    const { boot, note, snapshot } = booted;
    const info: RuntimeInfo = {
      pythonVersion: this.pyodide.runPython("import sys; sys.version.split()[0]") as string,
      pyodideVersion: this.pyodide.version,
      lockImports: [...this.lockImports.keys()],
      boot,
      ...(note ? { bootNote: note } : {}),
      ...(snapshot ? { snapshot } : {}),
    };
    return snapshot?.data instanceof Uint8Array ? Comlink.transfer(info, [snapshot.data.buffer as ArrayBuffer]) : info;
  }

  /** The worker's hooks in a newly loaded interpreter: fatal errors, Stop, output and input. */
  private prepare(pyodide: PyodideAPI): void {
    // Pyodide's internal hook for fatal errors: without it a dead interpreter looks busy.
    (pyodide as unknown as { _api: { on_fatal?: (error: unknown) => void } })._api.on_fatal = (error) =>
      this.post({ type: "fatal", message: fatalMessage(error) });
    if (this.interrupt) pyodide.setInterruptBuffer(this.interrupt);
    pyodide.setStdout({ write: (bytes: Uint8Array) => this.output.write("stdout", bytes) });
    pyodide.setStderr({ write: (bytes: Uint8Array) => this.output.write("stderr", bytes) });
    pyodide.setStdin({ stdin: () => this.readInput("") ?? null });
  }

  private initPackageIndex(): void {
    for (const [name, pkg] of Object.entries(this.pyodide.lockfile.packages)) {
      for (const imported of pkg.imports) this.lockImports.set(imported, name);
    }
    this.lockImportsPy = this.pyodide.toPy(this.lockImports) as PyProxy;
  }

  private initKernel(): void {
    const { interrupt } = this;
    this.kiln = this.pyodide.pyimport("kiln.runner");
    this.kiln.setup(
      (kind: string, payload: string) => this.output.emit(kind, payload),
      (seconds: number) => this.sleep(seconds),
      (prompt: string) => this.readInput(prompt),
      this.stdinBuffer ? null : INPUT_NEEDS_ISOLATION,
      interrupt ? () => Atomics.store(interrupt, 0, STOP_SEEN) : null,
      // Undefined, not null, when absent: Pyodide gives Python JavaScript's null as `jsnull`, not None.
      interrupt ? (waiting: boolean) => markWaiting(interrupt, waiting) : undefined,
      interrupt ? () => markStopSeen(interrupt) : undefined,
    );
    this.stop = this.pyodide.pyimport("kiln.stop");
  }

  async run(code: string, options: RunOptions): Promise<WorkerRunOutcome> {
    this.runId = options.runId;
    this.stop.run_started();
    try {
      const outcome: WorkerRunOutcome = await this.runCell(code, options).catch((error: unknown) => {
        // A Stop that arrived before the cell itself started raises outside it.
        if ((error as { type?: string })?.type !== "KeyboardInterrupt") throw error;
        this.output.flush();
        return { result: { status: "interrupted" as const, durationMs: 0 } };
      });
      const buffers = Object.values(outcome.capture?.values ?? {}).map((bytes) => bytes.buffer as ArrayBuffer);
      return Comlink.transfer(outcome, [...buffers, ...fileBuffers(outcome.result.valueCut)]);
    } finally {
      this.stop.cell_finished();
      this.post({ type: "done" });
    }
  }

  /**
   * Cancel the run's awaiting task; its SIGINT is then spent. Python is between two steps of
   * its run here (this call could not run otherwise), so SIGINT is put aside while the task is
   * cancelled: seen inside the cancel, it would leave the task cancelled halfway, its next step
   * never scheduled. Without a task to cancel, SIGINT is put back.
   */
  cancel(runId: number): boolean {
    if (runId !== this.runId) return false;
    const signal = this.interrupt ? Atomics.exchange(this.interrupt, 0, 0) : 0;
    // Taken here, not lost: the page must not write it again while the task is cancelled.
    if (signal && this.interrupt) markStopSeen(this.interrupt);
    let cancelled = false;
    try {
      cancelled = this.kiln.cancel() as boolean;
    } finally {
      if (!cancelled && signal && this.interrupt) Atomics.compareExchange(this.interrupt, 0, 0, signal);
    }
    return cancelled;
  }

  private async runCell(code: string, options: RunOptions): Promise<WorkerRunOutcome> {
    const started = performance.now();
    this.allowInput = options.allowInput;
    this.output.begin(options.outputLimitBytes);
    const finish = (result: Omit<RunResult, "durationMs">, capture?: StateCapture): WorkerRunOutcome => {
      this.output.flush();
      const truncatedBytes = this.output.droppedBytes;
      return {
        result: {
          ...result,
          ...(result.error ? { error: capError(result.error) } : {}),
          ...(truncatedBytes ? { truncatedBytes } : {}),
          durationMs: performance.now() - started,
        },
        ...(capture ? { capture } : {}),
      };
    };

    const { load, missing } = this.importPlan(code);
    if (missing.length) return finish(unavailable(missing));
    if (load.length) {
      const failure = await this.loadPackages(load);
      if (failure) return finish({ status: "error", error: failure });
    }

    const cell = take<CellResult>(await this.kiln.run_cell(code));
    const value = cell.value && this.output.capped(cell.value);
    const result: Omit<RunResult, "durationMs"> = {
      status: cell.status,
      ...(value ? { value: value.data, ...(value.cut ? { valueCut: value.cut } : {}) } : {}),
      ...(cell.error ? { error: cell.error } : {}),
      ...(cell.exit_code !== undefined ? { exitCode: cell.exit_code } : {}),
      ...(load.length ? { loadedPackages: load } : {}),
    };
    if (cell.status !== "ok") return finish(result);
    const captured = take<Omit<StateCapture, "tooLarge"> & { too_large: string[] }>(
      this.kiln.capture_state(code, cell.filename),
    );
    const { too_large: tooLarge, ...rest } = captured;
    return finish(result, { ...rest, tooLarge });
  }

  /**
   * Replay a session's definitions and values in this fresh interpreter; output is muted.
   * Values go to Python as the page's buffers themselves: each is copied once, into the object
   * it becomes.
   */
  async restore(snapshot: SessionSnapshot): Promise<RestoreReport> {
    this.output.begin(0);
    const imports = Object.values(snapshot.modules).map((module) => `import ${module}`);
    const source = [...snapshot.cells.map(([, cell]) => cell), ...imports].join("\n");
    const { load } = this.importPlan(source);
    if (load.length) await this.loadPackages(load);
    const { toPy } = this.pyodide;
    return take<RestoreReport>(
      this.kiln.restore_state(
        toPy(snapshot.cells),
        toPy(snapshot.names),
        Object.entries(snapshot.values),
        toPy(snapshot.modules),
        snapshot.counter,
      ),
    );
  }

  imports(code: string): ImportReport {
    return take(this.kiln.import_names(code));
  }

  listFiles(): FileInfo[] {
    return listWorkingFiles(this.pyodide.FS);
  }

  readFile(path: string): Uint8Array {
    const bytes = readWorkingFile(this.pyodide.FS, path);
    return Comlink.transfer(bytes, [bytes.buffer as ArrayBuffer]);
  }

  writeFile(path: string, data: string | Uint8Array | Blob | ArrayBuffer, append = false): Promise<void> {
    return writeWorkingFile(this.pyodide.FS, path, data, append);
  }

  deleteFile(path: string): void {
    deleteWorkingFile(this.pyodide.FS, path);
  }

  readFiles(paths: string[]): FileBytes[] {
    const files = readWorkingFiles(this.pyodide.FS, paths);
    return Comlink.transfer(files, files.map((file) => file.data.buffer as ArrayBuffer));
  }

  writeFiles(files: FileData[]): Promise<void> {
    return writeWorkingFiles(this.pyodide.FS, files);
  }

  deleteFiles(paths: string[]): void {
    deleteWorkingFiles(this.pyodide.FS, paths);
  }

  /** Which lock file packages to load for `code`, and which modules exist nowhere. */
  private importPlan(code: string): { load: string[]; missing: string[] } {
    return take(this.kiln.classify_imports(code, this.lockImportsPy));
  }

  /** Load lock file packages; a failure (offline, 404, hash mismatch) names the package. */
  private async loadPackages(names: string[]): Promise<PythonError | undefined> {
    const problems: string[] = [];
    this.post({ type: "progress", message: `Loading ${names.join(", ")}…` });
    await this.pyodide.loadPackage(names, {
      messageCallback: (message) => this.post({ type: "progress", message }),
      errorCallback: (message) => problems.push(message),
    });
    const failed = names.filter((name) => !(name in this.pyodide.loadedPackages));
    if (!failed.length) return undefined;
    const base = this.pyodide.lockfileBaseUrl ?? "the package download URL";
    const detail = problems.length ? `\n\n${problems.join("\n")}` : "";
    const list = failed.map((name) => `'${name}'`).join(", ");
    const evalue =
      `Could not load the package ${list} from ${base}: the network may be offline, ` +
      `the file missing, or its checksum wrong. Check the package download URL in Settings.`;
    return { ename: "PackageLoadError", evalue, traceback: `PackageLoadError: ${evalue}${detail}` };
  }

  private post(event: PostedEvent, transfer: Transferable[] = []): void {
    this.events.postMessage(event, transfer);
  }

  /**
   * `time.sleep` that a Stop or deadline cuts short (Pyodide's own cannot be interrupted).
   * Without shared memory nothing can wake it: it waits out the time, and a Stop replaces
   * the worker.
   */
  private sleep(seconds: number): void {
    this.output.flush();
    const end = performance.now() + seconds * 1000;
    if (!this.interrupt) {
      while (performance.now() < end) {
        // Busy wait: Atomics.wait needs a SharedArrayBuffer, and this page has none.
      }
      return;
    }
    const signal = this.interrupt;
    waitingForStop(signal, () => {
      for (;;) {
        if (Atomics.load(signal, 0) !== 0) {
          this.pyodide.checkInterrupt();
          return;
        }
        const left = end - performance.now();
        if (left <= 0) return;
        Atomics.wait(signal, 0, 0, left);
      }
    });
  }

  /** `input()`: ask the page and block until the person answers (or Stop). */
  private readInput(prompt: string): string | undefined {
    const { interrupt, stdinBuffer } = this;
    if (!this.allowInput || !interrupt || !stdinBuffer) return undefined;
    this.output.flush();
    expectStdin(stdinBuffer);
    this.post({ type: "input-request", prompt: capPrompt(prompt) });
    return waitingForStop(interrupt, () => {
      const answer = waitForStdin(stdinBuffer, () => Atomics.load(interrupt, 0) !== 0);
      if (answer === null && Atomics.load(interrupt, 0) !== 0) this.pyodide.checkInterrupt();
      return answer ?? undefined;
    });
  }
}

const INPUT_NEEDS_ISOLATION =
  "input() is not available on this page: the browser gives it no shared memory (SharedArrayBuffer; " +
  "the page is not cross-origin isolated, or the browser lacks it), so Python cannot wait for an answer. " +
  "Pass the value in the code instead.";

function fatalMessage(error: unknown): string {
  if (error && typeof error === "object" && "status" in error) {
    return `Python exited with status ${String((error as { status: unknown }).status)} (os._exit)`;
  }
  const text = error instanceof Error ? error.message : String(error);
  if (/call stack/i.test(text)) return "the WebAssembly stack overflowed (runaway recursion)";
  if (/memory/i.test(text)) return `out of memory (${text})`;
  return text;
}

function unavailable(missing: string[]): Omit<RunResult, "durationMs"> {
  const names = missing.join(", ");
  return {
    status: "unavailable",
    missingModules: missing,
    error: {
      ename: "ModuleNotFoundError",
      evalue:
        `${names} ${missing.length > 1 ? "are" : "is"} not available in the browser: ` +
        `not in Python's standard library nor in Pyodide's package index.`,
      traceback: `ModuleNotFoundError: No module named '${missing[0]}' (not available in the browser)`,
    },
  };
}
