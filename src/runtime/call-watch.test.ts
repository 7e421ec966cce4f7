import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { UNANSWERED_GRACE_MS, watchCall } from "./call-watch";
import type { WorkerHandle } from "./python-worker";

function fakeWorker() {
  const worker = { alive: true, interrupt: vi.fn(), terminate: vi.fn(), clearInterrupt: vi.fn(() => Promise.resolve()) };
  worker.terminate.mockImplementation(() => (worker.alive = false));
  return worker;
}

/** A call that the test answers by hand. */
function pending<T>() {
  let answer: (value: T) => void = () => undefined;
  const call = new Promise<T>((resolve) => (answer = resolve));
  return { call, answer };
}

describe("watchCall", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("leaves a call answered in time alone", async () => {
    const worker = fakeWorker();
    const { call, answer } = pending<string>();
    const watched = watchCall(worker as unknown as WorkerHandle, call, { limitMs: 1000, what: "reading a file", runOn: () => false });
    await vi.advanceTimersByTimeAsync(900);
    answer("bytes");
    await expect(watched).resolves.toEqual({ value: "bytes", interrupted: false });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(worker.interrupt).not.toHaveBeenCalled();
    expect(worker.terminate).not.toHaveBeenCalled();
  });

  it("interrupts Python once the limit passes, and keeps the worker when that brings the answer", async () => {
    const worker = fakeWorker();
    const { call, answer } = pending<string>();
    const watched = watchCall(worker as unknown as WorkerHandle, call, { limitMs: 1000, what: "bringing your variables back", runOn: () => false });
    await vi.advanceTimersByTimeAsync(1001);
    expect(worker.interrupt).toHaveBeenCalledTimes(1);
    answer("report");
    await expect(watched).resolves.toEqual({ value: "report", interrupted: true });
    await vi.advanceTimersByTimeAsync(UNANSWERED_GRACE_MS * 2);
    expect(worker.terminate).not.toHaveBeenCalled();
    // The interrupt it did not need is not left for the next run.
    expect(worker.clearInterrupt).toHaveBeenCalled();
  });

  it("replaces a worker still silent after the interrupt, saying what it was asked", async () => {
    const worker = fakeWorker();
    void watchCall(worker as unknown as WorkerHandle, new Promise<never>(() => undefined), { limitMs: 1000, what: "reading a cell's imports", runOn: () => false });
    await vi.advanceTimersByTimeAsync(1000 + UNANSWERED_GRACE_MS - 10);
    expect(worker.terminate).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(20);
    expect(worker.terminate).toHaveBeenCalledWith("Python stopped answering (reading a cell's imports), so its worker was replaced.");
  });

  it("waits as long as a run is on: the run keeps its own deadline", async () => {
    const worker = fakeWorker();
    let runOn = true;
    void watchCall(worker as unknown as WorkerHandle, new Promise<never>(() => undefined), { limitMs: 1000, what: "listing its files", runOn: () => runOn });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(worker.interrupt).not.toHaveBeenCalled();
    runOn = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(worker.interrupt).toHaveBeenCalledTimes(1);
  });

  it("a Stop interrupts at once, before the limit", async () => {
    const worker = fakeWorker();
    const stop = new AbortController();
    void watchCall(worker as unknown as WorkerHandle, new Promise<never>(() => undefined), { limitMs: 60_000, what: "reading a cell's imports", runOn: () => false, signal: stop.signal });
    await vi.advanceTimersByTimeAsync(500);
    stop.abort();
    expect(worker.interrupt).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(UNANSWERED_GRACE_MS);
    expect(worker.terminate).toHaveBeenCalledTimes(1);
  });
});
