/**
 * The SharedArrayBuffers the page and the worker share: the interrupt signal, and the
 * answer to `input()` while the worker blocks waiting for it.
 */

/** Pyodide raises KeyboardInterrupt when this signal number is written to the buffer. */
export const SIGINT = 2;
/**
 * What the worker writes back when Python saw SIGINT outside the person's code (SIGUSR1's
 * number, handled alike: see kiln/stop.py). Still a Stop, raised once the person's code runs,
 * but one that Python has seen: it is running, not stuck in C, so no reason for a hard stop.
 */
export const STOP_SEEN = 10;

/** The interrupt buffer's slots after the signal (see {@link createInterruptBuffer}). */
const WAITING = 1;
const SEEN = 2;

/**
 * Whether this page may share memory with its workers: only a cross-origin isolated page
 * has SharedArrayBuffer. Without it, Stop replaces the worker and `input()` cannot wait.
 */
export function sharedMemoryAvailable(): boolean {
  return typeof SharedArrayBuffer === "function" && globalThis.crossOriginIsolated === true;
}

/**
 * The interrupt buffer: Int32 signal (Pyodide's), then Int32 "waiting", 1 while the worker is
 * blocked in `time.sleep` or `input()`, or while the cell waits in `await` (see
 * {@link keepStopPending}), then Int32 "seen", 0 from a Stop until Python has seen it (see {@link markStopSeen}).
 */
export function createInterruptBuffer(): SharedArrayBuffer {
  const buffer = new SharedArrayBuffer(12);
  Atomics.store(new Int32Array(buffer), SEEN, 1);
  return buffer;
}

/**
 * Frame side: keeps a Stop pending until Python has seen it (a Stop erased unseen is written
 * again, below), and tells whether one is pending: set, with Python yet to reach a point where it
 * looks. A buffer that Pyodide's signal check has cleared is not pending: that check ran on
 * Python's thread, so Python runs bytecode (it is not stuck in C) and is seeing the Stop, or will
 * see the one written again at its next check, whether or not its handler has run yet. A worker
 * blocked in `time.sleep` or `input()`, or whose cell waits in `await`, is at such
 * a point: the Stop wakes `time.sleep` at once, `input()` looks every 50 ms, and a cell waiting in
 * `await` sees it at its next step (or the page cancels its task); each as soon as the worker has
 * the processor (on a busy machine, not always within the short grace the page gives code that may
 * be stuck in C).
 */
export function keepStopPending(buffer: SharedArrayBuffer): boolean {
  const signal = new Int32Array(buffer);
  if (Atomics.load(signal, WAITING) !== 0) return false;
  const current = Atomics.load(signal, 0);
  if (current === SIGINT) return true;
  // Cleared, yet seen by nobody: the signal check Pyodide runs reads the buffer and then writes
  // 0, two steps, so a Stop written between them is erased. It is written again.
  if (current === 0 && Atomics.load(signal, SEEN) === 0) Atomics.compareExchange(signal, 0, 0, SIGINT);
  return false;
}

/** Worker side: Python has seen the Stop (its handler ran, or the page's cancel took it). */
export function markStopSeen(signal: Int32Array): void {
  Atomics.store(signal, SEEN, 1);
}

/** Worker side: mark the worker as at a point where a Stop is seen (see {@link keepStopPending}), or no longer. */
export function markWaiting(signal: Int32Array, waiting: boolean): void {
  Atomics.store(signal, WAITING, waiting ? 1 : 0);
}

/**
 * Worker side: `wait()`, a block that a Stop ends, marked as waiting meanwhile (and then as it
 * was: another task may block while the cell waits in `await`).
 */
export function waitingForStop<T>(signal: Int32Array, wait: () => T): T {
  const before = Atomics.exchange(signal, WAITING, 1);
  try {
    return wait();
  } finally {
    Atomics.store(signal, WAITING, before);
  }
}

/** Frame side: forget a Stop meant for an earlier run; nothing is pending any more. */
export function clearInterrupt(buffer: SharedArrayBuffer): void {
  const signal = new Int32Array(buffer);
  Atomics.store(signal, SEEN, 1);
  Atomics.store(signal, 0, 0);
}

/** Page side: ask Python to stop; also wakes a `time.sleep` waiting on the buffer. */
export function requestInterrupt(buffer: SharedArrayBuffer): void {
  const signal = new Int32Array(buffer);
  Atomics.store(signal, SEEN, 0);
  Atomics.store(signal, 0, SIGINT);
  Atomics.notify(signal, 0);
}

/*
 * stdin layout: Int32 state, Int32 byte length, then up to STDIN_CAPACITY bytes of UTF-8.
 */

export const STDIN_CAPACITY = 64 * 1024;
const HEADER_BYTES = 8;

export const StdinState = { Idle: 0, Waiting: 1, Answered: 2, Closed: 3 } as const;

export function createStdinBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(HEADER_BYTES + STDIN_CAPACITY);
}

/** Page side: hand the person's answer to the waiting worker. */
export function answerStdin(buffer: SharedArrayBuffer, text: string | null): void {
  const header = new Int32Array(buffer, 0, 2);
  if (text === null) {
    Atomics.store(header, 0, StdinState.Closed);
  } else {
    const bytes = new TextEncoder().encode(text);
    const length = Math.min(bytes.length, STDIN_CAPACITY);
    new Uint8Array(buffer, HEADER_BYTES, STDIN_CAPACITY).set(bytes.subarray(0, length));
    Atomics.store(header, 1, length);
    Atomics.store(header, 0, StdinState.Answered);
  }
  Atomics.notify(header, 0);
}

/** Worker side, before asking: from now on an answer is kept until it is read. */
export function expectStdin(buffer: SharedArrayBuffer): void {
  Atomics.store(new Int32Array(buffer, 0, 2), 0, StdinState.Waiting);
}

/**
 * Worker side, after {@link expectStdin} and asking: wait for the answer. `shouldStop` is polled so an interrupt ends the wait.
 * Returns the text, or null when the page closed the prompt.
 */
export function waitForStdin(buffer: SharedArrayBuffer, shouldStop: () => boolean): string | null {
  const header = new Int32Array(buffer, 0, 2);
  for (;;) {
    const state = Atomics.load(header, 0);
    if (state === StdinState.Answered) {
      const length = Atomics.load(header, 1);
      const bytes = new Uint8Array(buffer, HEADER_BYTES, length).slice();
      Atomics.store(header, 0, StdinState.Idle);
      return new TextDecoder().decode(bytes);
    }
    if (state === StdinState.Closed || shouldStop()) {
      Atomics.store(header, 0, StdinState.Idle);
      return null;
    }
    Atomics.wait(header, 0, StdinState.Waiting, 50);
  }
}
