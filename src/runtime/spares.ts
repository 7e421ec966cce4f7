/**
 * Warm spares: Python workers that load before they are needed, so that a Restart or a
 * replaced worker takes one that is ready.
 */
import { loadWorkersAhead, workersAheadLoaded } from "./host-frame";
import { WorkerHandle, type WorkerConfig } from "./python-worker";
import { storageErased, whenErased } from "../storage/erased";

/**
 * The spares, one per worker configuration, shared by every session on the page: a
 * session whose worker must be replaced (or restarted) takes one that has already loaded.
 */
const spares = new Map<string, WorkerHandle>();
const configKey = (config: WorkerConfig) => JSON.stringify([config.lockFileUrl, config.packageBaseUrl, config.network]);

/** A worker for `config`: the warm spare when there is one, else a new one (made with `options`). */
export function takeWorker(config: WorkerConfig, options?: ConstructorParameters<typeof WorkerHandle>[1]): WorkerHandle {
  const key = configKey(config);
  const spare = spares.get(key);
  spares.delete(key);
  return spare?.alive ? spare : new WorkerHandle(config, options);
}

// Everything Kiln keeps was deleted: the spares stop too, and none starts again.
whenErased(() => {
  for (const spare of spares.values()) spare.terminate();
  spares.clear();
});

/** Make sure a spare for `config` is loading or loaded. */
export function warmSpare(config: WorkerConfig): void {
  if (storageErased()) return;
  const key = configKey(config);
  if (spares.get(key)?.alive) return;
  const spare = new WorkerHandle(config);
  spares.set(key, spare);
  spare.gone.catch(() => {
    if (spares.get(key) === spare) spares.delete(key);
  });
  // A page that keeps spares will want more workers: their code loads while it is idle.
  spare.ready.then(() => loadWorkersAhead(config.network), () => undefined);
}

/** Spares that will start loading after a wait. */
const dueSpares = new Set<Promise<void>>();

/** {@link warmSpare} after `delayMs`, if `wanted()` still says so then. */
export function warmSpareLater(config: WorkerConfig, delayMs: number, wanted: () => boolean): void {
  const due = new Promise<void>((resolve) =>
    setTimeout(() => {
      if (wanted()) warmSpare(config);
      dueSpares.delete(due);
      resolve();
    }, delayMs),
  );
  dueSpares.add(due);
}

/** Resolves once every spare, including those due to start, has loaded (for benchmarks). */
export async function sparesLoaded(): Promise<void> {
  while (dueSpares.size) await Promise.all(dueSpares);
  await Promise.allSettled([...spares.values()].map((spare) => spare.ready));
}

/**
 * Resolves once every spare has loaded and the frames have loaded the code of the worker
 * after it: the page is quiet (for benchmarks and tests that time recovery).
 */
export async function sparesReady(): Promise<void> {
  await sparesLoaded();
  await workersAheadLoaded();
}
