// Stop (SIGINT) under real Pyodide (Node): it lands only in the person's code (kiln/stop.py).
import type { PyodideAPI } from "pyodide";
import type { PyProxy } from "pyodide/ffi";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { loadKiln, runCell } from "./load-kiln";

const SIGINT = 2;
/** The worker's hook sets this when Python saw the Stop outside the person's code (STOP_SEEN). */
const STOP_SEEN = 10;
let py: PyodideAPI;
let runner: PyProxy;
const signal = new Int32Array(new SharedArrayBuffer(4));
let rearmed = 0;
/** What the worker's `awaiting` hook was told, in order (see kiln/stop.py). */
const awaiting: boolean[] = [];

const run = (code: string) => runCell(runner, code);

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
    (waiting: boolean) => awaiting.push(waiting),
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

  it("a cell waiting in await is marked so, and unmarked when it runs again, ends or is cancelled", async () => {
    awaiting.length = 0;
    const result = await run("import asyncio\nawait asyncio.sleep(0)\nawait asyncio.sleep(0.01)\n6 * 7");
    expect(result.value).toEqual({ "text/plain": "42" });
    expect(awaiting).toEqual([true, false, true, false]);

    // Cancelled while it waits (as the page does on Stop): unmarked, and reported as interrupted.
    awaiting.length = 0;
    const pending = run("import asyncio\nawait asyncio.sleep(1000)");
    await vi.waitFor(() => expect(awaiting).toEqual([true]));
    expect(runner.cancel()).toBe(true);
    expect(await pending).toMatchObject({ status: "interrupted", error: { ename: "KeyboardInterrupt" } });
    expect(awaiting).toEqual([true, false]);

    // Cancelled before its first step: the cell's coroutine is never made, so none is left never awaited.
    const early = py.runPython(`
import asyncio, gc, warnings
from kiln import stop
_warned, _made = [], []
_show, warnings.showwarning = warnings.showwarning, lambda message, *rest, **more: _warned.append(str(message))
async def _cell():
    await asyncio.sleep(1000)
def _start():
    _made.append(True)
    return _cell()
async def _early():
    task = asyncio.ensure_future(stop.marking_awaits(_start))
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    gc.collect()
    warnings.showwarning = _show
    return (len(_made), [w for w in _warned if "never awaited" in w])
_early()`) as Promise<PyProxy>;
    expect((await early).toJs()).toEqual([0, []]);

    // A cell with no await is never marked.
    awaiting.length = 0;
    expect((await run("sum(range(10))")).value).toEqual({ "text/plain": "45" });
    expect(awaiting).toEqual([]);
  });
});
