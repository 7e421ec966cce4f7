/**
 * After a Stop: how long Python gets to see it, and to finish, before its worker is replaced.
 */
import type { WorkerHandle } from "./python-worker";

/**
 * How long Python gets to notice SIGINT after a deadline before its worker is replaced. Pyodide
 * looks at the signal every 50 ticks of the interpreter and clears it when it does, so a
 * pure-Python loop notices within microseconds of having the processor; code stuck in C never
 * does. Once the check has cleared it, the Stop counts as seen (see keepStopPending), however
 * long Python then takes to run its handler (with 30 ms and no such rule, a loop that Python
 * would have stopped was now and then replaced on a slow 2-core machine, most likely there).
 * The page asks every {@link INTERRUPT_POLL_MS}, and counts only the time between prompt
 * answers: a machine too busy to answer may not have given Python a turn either.
 */
const DEADLINE_GRACE_MS = 50;
/**
 * The same for a person's Stop. Prompt answers do not prove that Python had the processor:
 * the threads that answer sleep between questions, and the scheduler runs them ahead of a
 * thread that computes, so on a machine whose cores are all busy a loop went unseen through
 * 50 ms of prompt answers and lost the variables that a soft stop keeps. A Stop is a person
 * waiting, for whom a quarter of a second more before a hard stop goes unnoticed; a deadline
 * keeps the shorter grace, so that an unattended run stuck in C is replaced at once.
 */
const STOP_GRACE_MS = 250;
/**
 * Without shared memory no SIGINT is sent: only a run waiting in `await` can stop, by having its
 * task cancelled, and the worker's answer to the cancel is the only sign. It gets this long.
 */
const CANCEL_GRACE_MS = 250;
const INTERRUPT_POLL_MS = 5;
/** The hard stop comes after this long however busy the machine is. */
const BUSY_HARD_STOP_GRACE_MS = 1000;
/** Once Python has noticed SIGINT, how long it gets to finish unwinding (or stop ignoring it). */
const UNWIND_GRACE_MS = 3000;

/** A run that may be stopped: why it was, and where the watch keeps its timer (cleared when the run ends). */
export interface StoppedRun {
  stopReason?: "stop" | "deadline";
  hardStop?: ReturnType<typeof setTimeout>;
  /** The worker cancelled the run's awaiting task: Python is unwinding. */
  cancelled?: boolean;
}

/**
 * Watches a Stop just sent to `worker`: `hardStop()` once Python has left SIGINT unseen through
 * {@link STOP_GRACE_MS} ({@link DEADLINE_GRACE_MS} after a deadline) of prompt answers (at
 * most {@link BUSY_HARD_STOP_GRACE_MS}), or {@link UNWIND_GRACE_MS} after it saw it (or its
 * awaiting task was cancelled) without the run ending. The watch ends, doing nothing, once
 * `stillRunning()` is false.
 */
export function watchStop(worker: WorkerHandle, run: StoppedRun, stillRunning: () => boolean, hardStop: () => void): void {
  const sent = performance.now();
  const grace = !worker.canInterrupt ? CANCEL_GRACE_MS : run.stopReason === "deadline" ? DEADLINE_GRACE_MS : STOP_GRACE_MS;
  let answered = sent;
  let calm = 0;
  const stop = () => {
    if (stillRunning()) hardStop();
  };
  const check = async () => {
    const pending = await worker.interruptPending().catch(() => true);
    if (!stillRunning()) return;
    // Seen but not finished yet (a slow unwind, a busy machine): give it longer.
    if (!pending || run.cancelled) {
      run.hardStop = setTimeout(stop, UNWIND_GRACE_MS);
      return;
    }
    // Only a prompt answer counts: on a machine too busy to answer, Python may not have had a turn.
    const now = performance.now();
    if (now - answered <= 2 * INTERRUPT_POLL_MS) calm += now - answered;
    answered = now;
    if (calm >= grace || now - sent >= BUSY_HARD_STOP_GRACE_MS) stop();
    else run.hardStop = setTimeout(() => void check(), INTERRUPT_POLL_MS);
  };
  run.hardStop = setTimeout(() => void check(), INTERRUPT_POLL_MS);
}
