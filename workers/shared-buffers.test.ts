import { describe, expect, it } from "vitest";
import {
  answerStdin,
  clearInterrupt,
  createInterruptBuffer,
  createStdinBuffer,
  expectStdin,
  markStopSeen,
  markWaiting,
  requestInterrupt,
  SIGINT,
  STOP_SEEN,
  keepStopPending,
  waitForStdin,
  waitingForStop,
} from "./shared-buffers";

describe("shared buffers", () => {
  it("passes an answer, including non-ASCII text, to a waiting reader", () => {
    const buffer = createStdinBuffer();
    expectStdin(buffer);
    answerStdin(buffer, "Grüße 👋");
    expect(waitForStdin(buffer, () => false)).toBe("Grüße 👋");
  });

  it("ends the wait with null when the prompt is closed or an interrupt arrives", () => {
    const buffer = createStdinBuffer();
    expectStdin(buffer);
    answerStdin(buffer, null);
    expect(waitForStdin(buffer, () => false)).toBeNull();
    const idle = createStdinBuffer();
    expectStdin(idle);
    expect(waitForStdin(idle, () => true)).toBeNull();
  });

  it("writes SIGINT for Pyodide to find", () => {
    const buffer = createInterruptBuffer();
    requestInterrupt(buffer);
    expect(new Int32Array(buffer)[0]).toBe(SIGINT);
  });

  it("counts a Stop as unseen until Python looks, except while the worker waits in sleep or input()", () => {
    const buffer = createInterruptBuffer();
    const signal = new Int32Array(buffer);
    expect(keepStopPending(buffer)).toBe(false);
    requestInterrupt(buffer);
    expect(keepStopPending(buffer)).toBe(true);
    expect(waitingForStop(signal, () => keepStopPending(buffer))).toBe(false);
    expect(keepStopPending(buffer)).toBe(true);
    // Ended by an exception (KeyboardInterrupt), the wait is no longer marked.
    expect(() => waitingForStop(signal, () => { throw new Error("KeyboardInterrupt"); })).toThrow("KeyboardInterrupt");
    expect(keepStopPending(buffer)).toBe(true);
    Atomics.store(signal, 0, STOP_SEEN);
    expect(keepStopPending(buffer)).toBe(false);
  });

  it("writes a Stop again when the buffer was cleared before Python saw it, and only then", () => {
    const buffer = createInterruptBuffer();
    const signal = new Int32Array(buffer);
    requestInterrupt(buffer);
    // Pyodide's signal check reads the buffer and then writes 0: a Stop written in between is erased.
    // That check ran on Python's thread, so Python is not stuck in C: the Stop is not pending.
    Atomics.store(signal, 0, 0);
    expect(keepStopPending(buffer)).toBe(false);
    expect(signal[0]).toBe(SIGINT);
    expect(keepStopPending(buffer)).toBe(true);
    // Seen by Python (its handler marks it), the Stop is not written again.
    markStopSeen(signal);
    Atomics.store(signal, 0, 0);
    expect(keepStopPending(buffer)).toBe(false);
    expect(signal[0]).toBe(0);
    // Nor once the page has cleared it for the next run.
    requestInterrupt(buffer);
    clearInterrupt(buffer);
    expect(keepStopPending(buffer)).toBe(false);
    expect(signal[0]).toBe(0);
  });

  it("keeps a cell waiting in await marked through another task's sleep", () => {
    const buffer = createInterruptBuffer();
    const signal = new Int32Array(buffer);
    requestInterrupt(buffer);
    markWaiting(signal, true);
    expect(keepStopPending(buffer)).toBe(false);
    waitingForStop(signal, () => undefined);
    expect(keepStopPending(buffer)).toBe(false);
    markWaiting(signal, false);
    expect(keepStopPending(buffer)).toBe(true);
  });
});
