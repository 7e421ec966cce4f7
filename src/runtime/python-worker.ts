import * as Comlink from "comlink";
import workerUrl from "../../workers/python.worker.ts?worker&url";
import type { FetchedFile, PythonWorkerApi, RuntimeInfo, WorkerEvent } from "../../workers/python-api";
import {
  answerStdin,
  createInterruptBuffer,
  createStdinBuffer,
  requestInterrupt,
  sharedMemoryAvailable,
} from "../../workers/shared-buffers";

/** What a worker is started with; workers with equal configs are interchangeable. */
export interface WorkerConfig {
  /** Lock file to use instead of Pyodide's own; empty for the default. */
  lockFileUrl: string;
  packageBaseUrl: string;
}

/** Absolute URL of Pyodide's core, served by the app itself. */
export function pyodideIndexUrl(): string {
  return new URL(`${import.meta.env.BASE_URL}pyodide/`, location.href).href;
}

let workerSource: Promise<string> | undefined;

/**
 * The worker's code for a `data:` URL. A `data:` worker has an opaque origin, so the page's
 * service worker does not see its requests: the built worker (one self-contained module)
 * is fetched by the page, which the service worker serves offline, and inlined. In dev, where
 * the worker module imports others, the `data:` URL imports it instead.
 */
function workerScript(): Promise<string> {
  const moduleUrl = new URL(workerUrl, location.href).href;
  if (import.meta.env.DEV) return Promise.resolve(`import ${JSON.stringify(moduleUrl)};`);
  workerSource ??= fetch(moduleUrl).then((response) => {
    if (!response.ok) throw new Error(`Could not load the Python worker (${response.status}).`);
    return response.text();
  });
  workerSource.catch(() => (workerSource = undefined));
  return workerSource;
}

/**
 * Start a module worker with an opaque origin, from a `data:` URL: code it runs cannot
 * open the app's IndexedDB, storage or cookies. It talks Comlink over `port`.
 */
async function startOpaqueWorker(port: MessagePort): Promise<Worker> {
  const source = await workerScript();
  const worker = new Worker(`data:text/javascript,${encodeURIComponent(source)}`, { type: "module", name: "kiln-python" });
  worker.postMessage({ kilnPort: port }, [port]);
  return worker;
}

/**
 * Fetches for the worker, made by the page so the service worker can answer them offline:
 * only Pyodide's core, the lock file and packages, never with credentials.
 */
function pageFetcher(config: WorkerConfig) {
  const lockDir = config.lockFileUrl ? new URL(".", config.lockFileUrl).href : "";
  const allowed = [pyodideIndexUrl(), config.packageBaseUrl, config.lockFileUrl, lockDir].filter(Boolean);
  return Comlink.proxy(async (url: string): Promise<FetchedFile> => {
    if (!allowed.some((prefix) => url.startsWith(prefix))) throw new Error(`Not a Pyodide or package URL: ${url}`);
    const response = await fetch(url, { credentials: "omit" });
    // The body is handed over as a stream: the page never holds or copies the bytes.
    const body = response.body ?? new Blob([]).stream();
    const file = { ok: response.ok, status: response.status, contentType: response.headers.get("content-type") ?? "", body };
    return Comlink.transfer(file, [body as unknown as Transferable]);
  });
}

/**
 * One Python worker: its Comlink proxy, its shared buffers and its event port. It starts
 * loading Pyodide at once; `ready` resolves when Python can run, `gone` rejects when the
 * worker is terminated or dies. On a page that is not cross-origin isolated there are no
 * shared buffers: SIGINT cannot be sent (only `await` can be cancelled), and `input()` fails.
 */
export class WorkerHandle {
  readonly api: Comlink.Remote<PythonWorkerApi>;
  readonly ready: Promise<RuntimeInfo>;
  readonly gone: Promise<never>;
  /** Where this worker's events go; set by the session that owns it. */
  onEvent: (event: WorkerEvent) => void = () => undefined;
  private worker: Worker | undefined;
  private readonly interruptBuffer = sharedMemoryAvailable() ? createInterruptBuffer() : undefined;
  private readonly stdinBuffer = sharedMemoryAvailable() ? createStdinBuffer() : undefined;
  private end: (reason: Error) => void = () => undefined;
  private ended = false;

  constructor(readonly config: WorkerConfig) {
    // Comlink talks over a port, so calls can be made before the worker exists: they wait.
    const rpc = new MessageChannel();
    this.api = Comlink.wrap<PythonWorkerApi>(rpc.port1);
    this.gone = new Promise<never>((_, reject) => {
      this.end = (reason) => {
        this.ended = true;
        reject(reason);
      };
    });
    this.gone.catch(() => undefined);
    startOpaqueWorker(rpc.port2).then(
      (worker) => {
        this.worker = worker;
        if (this.ended) worker.terminate();
        worker.addEventListener("error", (event) => {
          event.preventDefault();
          this.end(new Error(event.message || "The Python worker stopped unexpectedly."));
        });
      },
      (error: unknown) => this.end(error instanceof Error ? error : new Error(String(error))),
    );
    const channel = new MessageChannel();
    channel.port1.onmessage = (message: MessageEvent<WorkerEvent>) => this.onEvent(message.data);
    const init = this.api.init(
      Comlink.transfer(
        {
          indexURL: pyodideIndexUrl(),
          lockFileURL: config.lockFileUrl,
          packageBaseUrl: config.packageBaseUrl,
          interruptBuffer: this.interruptBuffer,
          stdinBuffer: this.stdinBuffer,
          events: channel.port2,
        },
        [channel.port2],
      ),
      pageFetcher(config),
    );
    this.ready = Promise.race([init, this.gone]);
    this.ready.catch(() => undefined);
  }

  get alive(): boolean {
    return !this.ended;
  }

  /** Whether SIGINT can reach Python (the page shares memory with the worker). */
  get canInterrupt(): boolean {
    return this.interruptBuffer !== undefined;
  }

  /** SIGINT: KeyboardInterrupt at the next bytecode, in `time.sleep`, or in `input()`. */
  interrupt(): void {
    if (this.interruptBuffer) requestInterrupt(this.interruptBuffer);
    if (this.stdinBuffer) answerStdin(this.stdinBuffer, null);
  }

  /** Forget an interrupt meant for an earlier run (called before a run starts). */
  clearInterrupt(): void {
    if (this.interruptBuffer) Atomics.store(new Int32Array(this.interruptBuffer), 0, 0);
  }

  /**
   * True while SIGINT waits to be seen: Python has not reached a point where it checks.
   * Without an interrupt buffer, SIGINT is never seen.
   */
  get interruptPending(): boolean {
    return !this.interruptBuffer || Atomics.load(new Int32Array(this.interruptBuffer), 0) !== 0;
  }

  answerInput(text: string | null): void {
    if (this.stdinBuffer) answerStdin(this.stdinBuffer, text);
  }

  terminate(reason = "Python was stopped."): void {
    if (this.ended) return;
    this.end(new Error(reason));
    this.api[Comlink.releaseProxy]();
    this.worker?.terminate();
  }
}

/**
 * Warm spares, one per worker configuration, shared by every session on the page: a
 * session whose worker must be replaced (or restarted) takes one that has already loaded.
 */
const spares = new Map<string, WorkerHandle>();
const configKey = (config: WorkerConfig) => JSON.stringify([config.lockFileUrl, config.packageBaseUrl]);

/** A worker for `config`: the warm spare when there is one, else a new one. */
export function takeWorker(config: WorkerConfig): WorkerHandle {
  const key = configKey(config);
  const spare = spares.get(key);
  spares.delete(key);
  return spare?.alive ? spare : new WorkerHandle(config);
}

/** Make sure a spare for `config` is loading or loaded. */
export function warmSpare(config: WorkerConfig): void {
  const key = configKey(config);
  if (spares.get(key)?.alive) return;
  const spare = new WorkerHandle(config);
  spares.set(key, spare);
  spare.gone.catch(() => {
    if (spares.get(key) === spare) spares.delete(key);
  });
}

/** Resolves once every spare has loaded (for benchmarks and tests that time recovery). */
export async function sparesReady(): Promise<void> {
  await Promise.allSettled([...spares.values()].map((spare) => spare.ready));
}
