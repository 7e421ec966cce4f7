import * as Comlink from "comlink";
import workerUrl from "../../workers/python.worker.ts?worker&url";
import type { PythonWorkerApi, RuntimeInfo, WorkerEvent } from "../../workers/python-api";
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

/**
 * Start a module worker with an opaque origin: its `data:` URL only imports the real
 * worker module. Code it runs cannot open the app's IndexedDB, storage or cookies.
 */
function startOpaqueWorker(): Worker {
  const moduleUrl = new URL(workerUrl, location.href).href;
  const source = `import ${JSON.stringify(moduleUrl)};`;
  return new Worker(`data:text/javascript,${encodeURIComponent(source)}`, { type: "module", name: "kiln-python" });
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
  private readonly worker: Worker;
  private readonly interruptBuffer = sharedMemoryAvailable() ? createInterruptBuffer() : undefined;
  private readonly stdinBuffer = sharedMemoryAvailable() ? createStdinBuffer() : undefined;
  private end: (reason: Error) => void = () => undefined;
  private ended = false;

  constructor(readonly config: WorkerConfig) {
    this.worker = startOpaqueWorker();
    this.api = Comlink.wrap<PythonWorkerApi>(this.worker);
    this.gone = new Promise<never>((_, reject) => {
      this.end = (reason) => {
        this.ended = true;
        reject(reason);
      };
    });
    this.gone.catch(() => undefined);
    this.worker.addEventListener("error", (event) => {
      event.preventDefault();
      this.end(new Error(event.message || "The Python worker stopped unexpectedly."));
    });
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
    this.worker.terminate();
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
