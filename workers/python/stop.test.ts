// Stop (SIGINT) under real Pyodide (Node): it lands only in the person's code (kiln/stop.py).
import type { PyodideAPI } from "pyodide";
import type { PyProxy } from "pyodide/ffi";
import { beforeAll, describe, expect, it } from "vitest";
import { loadKiln } from "./load-kiln";

const SIGINT = 2;
/** The worker's hook sets this when Python saw the Stop outside the person's code (STOP_SEEN). */
const STOP_SEEN = 10;
let py: PyodideAPI;
let runner: PyProxy;
const signal = new Int32Array(new SharedArrayBuffer(4));
let rearmed = 0;

interface Cell {
  status: string;
  value?: Record<string, string>;
  error?: { ename: string };
}

async function run(code: string): Promise<Cell> {
  const proxy = (await runner.run_cell(code)) as PyProxy;
  const result = proxy.toJs({ dict_converter: Object.fromEntries }) as Cell;
  proxy.destroy();
  return result;
}

/** Busy Python that is not a cell's (Kiln's own, asyncio's): long enough to look at the signal. */
const notACell = () => py.runPython("sum(i * i for i in range(200_000))");

beforeAll(async () => {
  ({ py, runner } = await loadKiln());
  runner.setup(
    () => undefined,
    null,
    null,
    null,
    () => {
      rearmed += 1;
      Atomics.store(signal, 0, STOP_SEEN);
    },
  );
  py.setInterruptBuffer(signal);
}, 60_000);

describe("Stop", () => {
  it("seen outside the person's code while a run is open, waits for the cell, which it stops", async () => {
    const stop = py.pyimport("kiln.stop");
    stop.run_started();
    Atomics.store(signal, 0, SIGINT);
    rearmed = 0;
    // The signal was seen (and set again) by code that is not the cell's, which went on unharmed.
    expect(notACell()).toBe(2666646666700000);
    expect(rearmed).toBeGreaterThan(0);
    expect(Atomics.load(signal, 0)).toBe(STOP_SEEN);
    const result = await run("n = 0\nwhile True:\n    n += 1");
    expect(result).toMatchObject({ status: "interrupted", error: { ename: "KeyboardInterrupt" } });
    expect(Atomics.load(signal, 0)).toBe(0);
    expect((await run("6 * 7")).value).toEqual({ "text/plain": "42" });
  });

  it("seen after the run's cell has finished, is dropped: the next call into Python is unharmed", async () => {
    expect((await run("finished = True")).status).toBe("ok");
    Atomics.store(signal, 0, SIGINT);
    rearmed = 0;
    expect(notACell()).toBe(2666646666700000);
    expect(rearmed).toBe(0);
    expect(Atomics.load(signal, 0)).toBe(0);
  });
});
