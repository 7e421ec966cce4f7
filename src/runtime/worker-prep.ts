import type { RuntimeInfo } from "../../workers/python-api";
import type { WorkerHandle } from "./python-worker";

/** Work a worker needs before it runs anything (a session's puts the person's files back). */
export type WorkerSetup = (api: WorkerHandle["api"]) => Promise<void>;

/**
 * Each worker's start-up, followed by the setup that every worker of a session has, now and
 * after each restart or replacement. A failed setup is logged, never fatal.
 */
export class WorkerPrep {
  private setup: WorkerSetup | undefined;
  /** The setup each worker had (or is having). */
  private readonly setUp = new WeakMap<WorkerHandle, { setup: WorkerSetup; finished: Promise<void> }>();
  /** Each worker's start-up, setup included. */
  private readonly prepared = new WeakMap<WorkerHandle, Promise<RuntimeInfo>>();

  /** From now on every worker has `setup`; `current` has it at once. */
  use(setup: WorkerSetup, current: WorkerHandle): void {
    this.setup = setup;
    this.prepared.set(current, this.prepare(current));
  }

  /** Resolves when `worker` is started and set up (rejects if it could not start). */
  ready(worker: WorkerHandle): Promise<RuntimeInfo> {
    let ready = this.prepared.get(worker);
    if (!ready) {
      ready = this.prepare(worker);
      this.prepared.set(worker, ready);
    }
    return ready;
  }

  private prepare(worker: WorkerHandle): Promise<RuntimeInfo> {
    const ready = this.startAndSetUp(worker);
    ready.catch(() => undefined);
    return ready;
  }

  private async startAndSetUp(worker: WorkerHandle): Promise<RuntimeInfo> {
    const info = await worker.ready;
    const setup = this.setup;
    let done = this.setUp.get(worker);
    // Once per worker and setup: a start-up begun before the setup was given runs it too, and the later one waits for it.
    if (setup && done?.setup !== setup) {
      done = {
        setup,
        finished: setup(worker.api).catch((error: unknown) => {
          if (worker.alive) console.error("Worker setup failed.", error);
        }),
      };
      this.setUp.set(worker, done);
    }
    await done?.finished;
    // Ended during its setup: not ready, whatever the setup did.
    if (!worker.alive) await worker.gone;
    return info;
  }
}
