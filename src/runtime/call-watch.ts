/**
 * Calls to a worker other than runs (a restore, which unpickles values and so can run any
 * code; a file written or read; a cell's imports), watched for a worker that no longer answers.
 */
import type { WorkerHandle } from "./python-worker";

/** After the interrupt, how long a call may stay unanswered before its worker is replaced. */
export const UNANSWERED_GRACE_MS = 2_000;

export interface CallWatch {
  /** Unanswered this long, Python is interrupted. */
  limitMs: number;
  /** What the worker was asked, for the reason it is replaced ("reading a file"). */
  what: string;
  /** A run is on: it keeps its own deadline and Stop, and the call waits behind it. */
  runOn: () => boolean;
  /** A Stop: Python is interrupted at once. */
  signal?: AbortSignal;
}

/**
 * `call`'s answer from `worker`. Left unanswered through `limitMs` while no run is on, or once
 * `signal` aborts, Python is interrupted (KeyboardInterrupt ends a callback that never returns,
 * and a restore counts the value it was on as lost), and if the call is still unanswered
 * {@link UNANSWERED_GRACE_MS} later, the worker is replaced: one that an earlier run left stuck
 * (a callback that never returns, a worker that closed itself) would otherwise hold the call,
 * and all that waits behind it, for good. `interrupted`: the answer came only after the interrupt.
 */
export async function watchCall<T>(worker: WorkerHandle, call: Promise<T>, watch: CallWatch): Promise<{ value: T; interrupted: boolean }> {
  let interrupted = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const escalate = () => {
    if (interrupted || !worker.alive) return;
    if (watch.runOn()) {
      timer = setTimeout(escalate, watch.limitMs);
      return;
    }
    interrupted = true;
    worker.interrupt();
    timer = setTimeout(() => worker.terminate(`Python stopped answering (${watch.what}), so its worker was replaced.`), UNANSWERED_GRACE_MS);
  };
  timer = setTimeout(escalate, watch.limitMs);
  watch.signal?.addEventListener("abort", escalate);
  try {
    return { value: await call, interrupted };
  } finally {
    clearTimeout(timer);
    watch.signal?.removeEventListener("abort", escalate);
    // Python answered without taking the interrupt (it was stuck outside Python): not for the next run.
    if (interrupted && worker.alive) void worker.clearInterrupt();
  }
}
