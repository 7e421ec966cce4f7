import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { watchStop, type StoppedRun } from "./stop-watch";
import type { WorkerHandle } from "./python-worker";

/** A worker whose frame answers every question at once: the signal is still there until `seen`. */
function promptWorker() {
  const state = { seen: false };
  const worker = { canInterrupt: true, interruptPending: () => Promise.resolve(!state.seen) } as unknown as WorkerHandle;
  return { worker, state };
}

describe("watchStop", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] }));
  afterEach(() => vi.useRealTimers());

  it("gives Python a quarter of a second of prompt answers to see a person's Stop before replacing it", async () => {
    const { worker } = promptWorker();
    const hardStop = vi.fn();
    watchStop(worker, { stopReason: "stop" }, () => true, hardStop);
    await vi.advanceTimersByTimeAsync(200);
    expect(hardStop).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(100);
    expect(hardStop).toHaveBeenCalledTimes(1);
  });

  it("replaces Python stuck past a deadline after 50 ms", async () => {
    const { worker } = promptWorker();
    const hardStop = vi.fn();
    watchStop(worker, { stopReason: "deadline" }, () => true, hardStop);
    await vi.advanceTimersByTimeAsync(70);
    expect(hardStop).toHaveBeenCalledTimes(1);
  });

  it("keeps a Python that saw the Stop late, when it ends its run while unwinding", async () => {
    const { worker, state } = promptWorker();
    const hardStop = vi.fn();
    const run: StoppedRun = { stopReason: "stop" };
    let running = true;
    watchStop(worker, run, () => running, hardStop);
    await vi.advanceTimersByTimeAsync(150);
    state.seen = true;
    await vi.advanceTimersByTimeAsync(1000);
    running = false;
    await vi.advanceTimersByTimeAsync(5000);
    expect(hardStop).not.toHaveBeenCalled();
  });
});
