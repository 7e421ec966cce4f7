import * as Comlink from "comlink";
import workerUrl from "../../workers/python.worker.ts?worker&url";
import type {
  FileData,
  HostCommand,
  HostLaunch,
  PythonWorkerApi,
  RuntimeInfo,
  PostedEvent,
  WorkerInit,
} from "../../workers/python-api";
import { serveFetches } from "./worker-fetches";
import { forgetHostFrame, hostFrame, keepFilesInFrame, workerReady, type HostFrame } from "./host-frame";
import { abandonOffer, offerSnapshot, settleBoot } from "./boot-snapshot";
import {
  dropped,
  isBoolean,
  isBytes,
  isFileBytesList,
  isFileList,
  isHostReport,
  isImportReport,
  isRestoreReport,
  isRuntimeInfo,
  isOversizedStreams,
  isPostedEvent,
  isWorkerRunOutcome,
} from "./worker-guards";

/** What a worker is started with; workers with equal configs are interchangeable. */
export interface WorkerConfig {
  /** Lock file to use instead of Pyodide's own; empty for the default. */
  lockFileUrl: string;
  packageBaseUrl: string;
  /** Whether Python may connect to the network (its frame's policy enforces it). */
  network: boolean;
}

/** Absolute URL of Pyodide's core, served by the app itself. */
export function pyodideIndexUrl(): string {
  return new URL(`${import.meta.env.BASE_URL}pyodide/`, location.href).href;
}

// A reply from the worker is data: never a proxy that the page would call into.
Comlink.transferHandlers.delete("proxy");

const BLOB_PROBE = "kiln: does this Blob arrive whole?";
/** A worker of this page has read a Blob whole: the engine lets them, and later workers are not asked (a round trip of each start). */
let blobsReachWorkers = false;

/**
 * The worker's API as the page uses it: every call goes page → worker, and every reply is
 * checked against the contract before anyone sees it. A call to a worker that ends or dies
 * before it answers fails with the reason (`gone`), instead of waiting for ever.
 */
export class WorkerApi {
  /** Whether Blobs reach this worker whole (see {@link PythonWorkerApi.readsBlob}); asked once. */
  private blobs: Promise<boolean> | undefined;

  constructor(
    private readonly remote: Comlink.Remote<PythonWorkerApi>,
    private readonly gone: Promise<never>,
  ) {}

  /** Set once the worker has ended: a call then fails at once, with the reason it ended. */
  private released = false;

  /** The reply to `call()` (or why the worker ended) when `guard` accepts it; otherwise the call fails (and the reply is logged). */
  private async checked<T>(what: string, call: () => Promise<unknown>, guard: (value: unknown) => value is T): Promise<T> {
    const value = await this.answer(call);
    if (guard(value)) return value;
    dropped(`reply to ${what}`, value);
    throw new Error(`The Python worker sent a malformed reply to ${what}.`);
  }

  readsBlobs(): Promise<boolean> {
    this.blobs ??= blobsReachWorkers
      ? Promise.resolve(true)
      : this.checked("readsBlob", () => this.remote.readsBlob(new Blob([BLOB_PROBE]), BLOB_PROBE), isBoolean)
          .catch(() => false)
          .then((whole) => {
            if (whole) blobsReachWorkers = true;
            return whole;
          });
    return this.blobs;
  }

  /** `data` as this worker can take it: the Blob itself, or its bytes (handed over, not copied). */
  async portable(data: Blob): Promise<Blob | ArrayBuffer> {
    if (await this.readsBlobs()) return data;
    const bytes = await data.arrayBuffer();
    return Comlink.transfer(bytes, [bytes]);
  }

  init(options: WorkerInit) {
    return this.checked("init", () => this.remote.init(options), isRuntimeInfo);
  }
  run(...args: Parameters<PythonWorkerApi["run"]>) {
    return this.checked("run", () => this.remote.run(...args), isWorkerRunOutcome);
  }
  cancel(runId: number) {
    return this.checked("cancel", () => this.remote.cancel(runId), isBoolean);
  }
  restore(...args: Parameters<PythonWorkerApi["restore"]>) {
    return this.checked("restore", () => this.remote.restore(...args), isRestoreReport);
  }
  imports(code: string) {
    return this.checked("imports", () => this.remote.imports(code), isImportReport);
  }
  listFiles() {
    return this.checked("listFiles", () => this.remote.listFiles(), isFileList);
  }
  readFile(path: string) {
    return this.checked("readFile", () => this.remote.readFile(path), isBytes);
  }
  async writeFile(path: string, data: string | Uint8Array | Blob, append = false): Promise<void> {
    const payload =
      typeof data === "string" ? data : data instanceof Blob ? await this.portable(data) : Comlink.transfer(data, [data.buffer as ArrayBuffer]);
    await this.answer(() => this.remote.writeFile(path, payload, append));
  }
  async deleteFile(path: string): Promise<void> {
    await this.answer(() => this.remote.deleteFile(path));
  }
  /** Many files in one call; the page checks each (its path was asked for, its size) before use. */
  readFiles(paths: string[]) {
    return this.checked("readFiles", () => this.remote.readFiles(paths), isFileBytesList);
  }
  /** Many files in one call: Blobs as this worker can take them, bytes handed over. */
  async writeFiles(files: readonly FileData[]): Promise<void> {
    const payload = await Promise.all(
      files.map(async ({ path, data }) => ({ path, data: data instanceof Blob && !(await this.readsBlobs()) ? await data.arrayBuffer() : data })),
    );
    const buffers = payload.flatMap((file) => (file.data instanceof ArrayBuffer ? [file.data] : []));
    await this.answer(() => this.remote.writeFiles(Comlink.transfer(payload, buffers)));
  }
  async deleteFiles(paths: string[]): Promise<void> {
    await this.answer(() => this.remote.deleteFiles(paths));
  }
  release(): void {
    this.released = true;
    this.remote[Comlink.releaseProxy]();
  }

  /** `call()`'s answer, or the reason the worker ended first (a call to a released proxy never goes out). */
  private answer(call: () => Promise<unknown>): Promise<unknown> {
    if (this.released) return this.gone;
    // A failure the worker reports is its data too: of it, only a message that is a string of bounded length is kept.
    const answered = call().catch((error: unknown) => {
      throw workerFailure(error);
    });
    return Promise.race([answered, this.gone]);
  }
}

/** What the page keeps of a failure the worker reported: a plain Error, its message a bounded string. */
export function workerFailure(error: unknown): Error {
  const message = error !== null && typeof error === "object" ? (error as { message?: unknown }).message : undefined;
  return new Error(typeof message === "string" ? message.slice(0, 2000) : "The Python worker reported a failure it did not describe.");
}

/** Why a worker that sent far more output than a run may was replaced. */
export const FLOODED = "Python sent far more output than the limit allows, so its worker was replaced.";

/** How long a host frame may take to start its worker before the start counts as failed. */
const HOST_START_TIMEOUT_MS = 30_000;

/**
 * One Python worker, started by a sandboxed host frame of its own: its API, its host's
 * control port and its event port. It starts loading Pyodide at once; `ready` resolves when
 * Python can run, `gone` rejects when the worker is terminated or dies. Without shared
 * memory (see {@link canInterrupt}) SIGINT cannot be sent (only `await` can be cancelled),
 * and `input()` fails.
 */
export class WorkerHandle {
  readonly api: WorkerApi;
  readonly ready: Promise<RuntimeInfo>;
  readonly gone: Promise<never>;
  /** Where this worker's events go; set by the session that owns it. */
  onEvent: (event: PostedEvent) => void = () => undefined;
  private readonly host: HostFrame;
  private readonly control: MessagePort;
  /** Its events and its requests for files, closed when it ends (their handlers hold this handle). */
  private readonly events: MessagePort;
  private readonly fetches: MessagePort;
  private sharedMemory = false;
  private nextQuery = 0;
  private readonly answers = new Map<number, (value: boolean) => void>();
  private end: (reason: Error) => void = () => undefined;
  private ended = false;
  /** Stops listening for its frame's death. */
  private leaveFrame: () => void = () => undefined;

  /** `mayMakeSnapshot` false: a run waits for this worker, which then makes no start-up snapshot (see boot-snapshot.ts). */
  constructor(
    readonly config: WorkerConfig,
    { mayMakeSnapshot = true }: { mayMakeSnapshot?: boolean } = {},
  ) {
    // Comlink talks over a port, so calls can be made before the worker exists: they wait.
    const rpc = new MessageChannel();
    const events = new MessageChannel();
    const fetches = new MessageChannel();
    const control = new MessageChannel();
    this.gone = new Promise<never>((_, reject) => {
      this.end = (reason) => {
        this.ended = true;
        reject(reason);
      };
    });
    this.gone.catch(() => undefined);
    this.api = new WorkerApi(Comlink.wrap<PythonWorkerApi>(rpc.port1), this.gone);
    this.control = control.port1;
    this.events = events.port1;
    this.fetches = fetches.port1;

    events.port1.onmessage = (message: MessageEvent<unknown>) => {
      if (isPostedEvent(message.data)) this.onEvent(message.data);
      else if (isOversizedStreams(message.data)) this.terminate(FLOODED);
      else dropped("event", message.data);
    };
    const started = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        // A frame that starts no worker is not asked again: the next worker gets a new one.
        forgetHostFrame(this.host);
        reject(new Error("The Python sandbox frame did not start."));
      }, HOST_START_TIMEOUT_MS);
      // A worker ended before its frame started it says nothing about the frame.
      this.gone.catch(() => clearTimeout(timer));
      this.control.onmessage = (message: MessageEvent<unknown>) => {
        const report = message.data;
        if (!isHostReport(report)) return dropped("report", report);
        if (report.type === "started") {
          clearTimeout(timer);
          this.sharedMemory = report.sharedMemory;
          resolve();
        } else if (report.type === "answer") {
          this.answers.get(report.id)?.(report.value);
          this.answers.delete(report.id);
        } else {
          clearTimeout(timer);
          this.fail(new Error(report.message));
        }
      };
    });

    // The frame's code first: its start has more steps to go than Pyodide's files have.
    this.host = hostFrame(config.network);
    // The frame compiles Pyodide's WebAssembly while its worker starts, as soon as the page has it.
    const core = serveFetches(fetches.port1, config, pyodideIndexUrl(), (body) => this.api.portable(body));
    void core.wasm.then((body) => this.command({ type: "wasm", body }));
    this.host.count(+1);
    // Its frame's process died: so did this worker.
    this.leaveFrame = this.host.onLost((error) => this.fail(error));
    this.host.launcher
      .then((launcher) => {
        if (this.ended) return;
        const launch: HostLaunch = { kilnLaunch: 1, control: control.port2, kilnPort: rpc.port2, events: events.port2, fetch: fetches.port2 };
        launcher.postMessage(launch, [control.port2, rpc.port2, events.port2, fetches.port2]);
      })
      .catch((error: unknown) => this.fail(error));

    // The snapshot is read (once per page) while the frame starts.
    const offer = offerSnapshot(workerUrl, started, mayMakeSnapshot);
    // What this start reads, the frame keeps for the next ones.
    void Promise.all([core.stdlib, offer]).then(([stdlib, { snapshot }]) => keepFilesInFrame(this.host, stdlib, snapshot ?? null));
    const init = Promise.all([started, offer]).then(async ([, offer]) => {
      const { snapshot, makeSnapshot } = offer;
      const sendBlobs = await this.api.readsBlobs();
      const options = { indexURL: pyodideIndexUrl(), lockFileURL: config.lockFileUrl, packageBaseUrl: config.packageBaseUrl, makeSnapshot, sendBlobs };
      const data = snapshot && (await this.api.portable(snapshot.data));
      const info = await this.api.init(snapshot && data ? { ...options, snapshot: { data, checksum: snapshot.checksum } } : options);
      return settleBoot(workerUrl, offer, info);
    });
    this.ready = Promise.race([init, this.gone]);
    this.ready.then(() => workerReady(this.host), () => undefined);
    // Failed, or ended before it was ready (a call to an ended worker never answers).
    this.ready.catch(() => void offer.then(abandonOffer));
    started.catch((error: unknown) => this.fail(error));
  }

  get alive(): boolean {
    return !this.ended;
  }

  /** Whether SIGINT can reach Python (the host frame shares memory with the worker). */
  get canInterrupt(): boolean {
    return this.sharedMemory;
  }

  private command(command: HostCommand): void {
    if (!this.ended) this.control.postMessage(command);
  }

  private ask(type: "clear-interrupt" | "interrupt-pending", otherwise: boolean): Promise<boolean> {
    if (this.ended) return Promise.resolve(otherwise);
    const id = ++this.nextQuery;
    const answer = new Promise<boolean>((resolve) => this.answers.set(id, resolve));
    this.command({ type, id });
    return Promise.race([answer, this.gone.catch(() => otherwise)]);
  }

  /** SIGINT: KeyboardInterrupt at the next bytecode, in `time.sleep`, or in `input()`. */
  interrupt(): void {
    this.command({ type: "interrupt" });
  }

  /** Forget an interrupt meant for an earlier run (before a run starts); resolves once done. */
  async clearInterrupt(): Promise<void> {
    await this.ask("clear-interrupt", true);
  }

  /**
   * True while SIGINT waits to be seen: Python has not reached a point where it checks.
   * Without shared memory, SIGINT is never seen.
   */
  interruptPending(): Promise<boolean> {
    return this.ask("interrupt-pending", true);
  }

  answerInput(text: string | null): void {
    this.command({ type: "answer-input", text });
  }

  terminate(reason = "Python was stopped."): void {
    this.fail(new Error(reason));
  }

  private fail(error: unknown): void {
    if (this.ended) return;
    this.end(error instanceof Error ? error : new Error(String(error)));
    this.api.release();
    this.control.postMessage({ type: "terminate" } satisfies HostCommand);
    this.control.close();
    this.events.close();
    this.fetches.close();
    this.leaveFrame();
    this.host.count(-1);
  }
}
