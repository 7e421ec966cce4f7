import { describe, expect, it } from "vitest";
import { MAX_RUNS_PER_FLUSH } from "../../workers/output-batcher";
import { isFetchRequest, isFileList, isHostFiles, isHostReport, isOversizedStreams, isPostedEvent, isWorkerRunOutcome, isRuntimeInfo } from "./worker-guards";

describe("checks on what the worker sends", () => {
  it("accepts every event of the contract", () => {
    for (const event of [
      { type: "streams", runs: [["stdout", "hi"], ["stderr", ""], ["stdout", "a\n"]] },
      { type: "streams", runs: [] },
      { type: "display", data: { "text/plain": "1", "image/png": "iVBOR" } },
      { type: "progress", message: "Loading numpy…" },
      { type: "input-request", prompt: "name? " },
      { type: "truncated", limitBytes: 1024 },
      { type: "fatal", message: "out of memory" },
      { type: "done" },
    ]) {
      expect(isPostedEvent(event), JSON.stringify(event)).toBe(true);
    }
  });

  it("drops forged and malformed events", () => {
    for (const event of [
      null,
      "done",
      [],
      { type: "stream", name: "stdout", text: "x" },
      { type: "streams", runs: [["evil", "x"]] },
      { type: "streams", runs: [["stdout", 42]] },
      { type: "streams", runs: [["stdout", "x", "y"]] },
      { type: "streams", runs: [{ 0: "stdout", 1: "x" }] },
      { type: "streams", runs: "stdout" },
      { type: "streams", runs: [["stdout", "x"]], extra: true },
      { type: "display", data: { "text/html": { toString: "x" } } },
      { type: "display", data: [] },
      { type: "progress" },
      { type: "truncated", limitBytes: -1 },
      { type: "CONSTRUCT", path: ["constructor"], argumentList: [] },
      { id: "1", type: "APPLY", path: [], argumentList: [] },
      { type: "done", then: "x" },
    ]) {
      expect(isPostedEvent(event), JSON.stringify(event)).toBe(false);
    }
  });

  it("refuses a streams event of more runs than one flush holds without reading a run", () => {
    const run = ["stdout", "x\n"];
    const full = { type: "streams", runs: Array.from({ length: MAX_RUNS_PER_FLUSH }, () => run) };
    expect(isPostedEvent(full)).toBe(true);
    expect(isOversizedStreams(full)).toBe(false);
    // Millions of runs (as a worker taken over can send by reference): every read of one is counted.
    const read: PropertyKey[] = [];
    const runs = new Proxy(new Array<unknown>(20_000_000).fill(run, 0, 10), {
      get(target, key, receiver) {
        if (key !== "length") read.push(key);
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const flood = { type: "streams", runs };
    expect(isPostedEvent(flood)).toBe(false);
    expect(isOversizedStreams(flood)).toBe(true);
    expect(read).toEqual([]);
    // One run more than a flush holds is refused too; the other events are not oversized streams.
    const over = { type: "streams", runs: [...full.runs, run] };
    expect(isPostedEvent(over)).toBe(false);
    expect(isOversizedStreams(over)).toBe(true);
    expect(isOversizedStreams({ type: "display", runs: over.runs })).toBe(false);
    expect(isOversizedStreams({ type: "streams", runs: "x".repeat(MAX_RUNS_PER_FLUSH + 1) })).toBe(false);
  });

  it("accepts a run's outcome and refuses one that breaks the contract", () => {
    const ok = {
      result: { status: "ok", value: { "text/plain": "2" }, durationMs: 3.5 },
      capture: { names: ["x"], values: { x: new Uint8Array([1, 2]) }, modules: {}, removed: [], dropped: [], tooLarge: [], counter: 1, cell: ["<cell-1>", "x = 1"] },
    };
    expect(isWorkerRunOutcome(ok)).toBe(true);
    expect(isWorkerRunOutcome({ result: { status: "error", error: { ename: "E", evalue: "v", traceback: "t" }, durationMs: 1 } })).toBe(true);
    for (const bad of [
      { result: { status: "pwned", durationMs: 1 } },
      // Only the page decides that a run timed out or crashed.
      { result: { status: "timeout", durationMs: 1 } },
      { result: { status: "ok", durationMs: "soon" } },
      { result: { status: "ok", durationMs: 1, value: { "text/plain": 2 } } },
      { result: { status: "ok", durationMs: 1, restored: { kept: ["x"], lost: [] } } },
      { result: { status: "ok", durationMs: 1 }, capture: { ...ok.capture, values: { x: "not bytes" } } },
      { result: { status: "ok", durationMs: 1 }, capture: { ...ok.capture, cell: ["only one"] } },
      { result: { status: "ok", durationMs: 1 }, then: 1 },
    ]) {
      expect(isWorkerRunOutcome(bad), JSON.stringify(bad)).toBe(false);
    }
  });

  it("checks start-up info, file lists, fetch requests and host reports", () => {
    const info = { pythonVersion: "3.14.2", pyodideVersion: "314.0.7", lockImports: ["numpy"], boot: "fresh" };
    expect(isRuntimeInfo(info)).toBe(true);
    const snapshot = { data: new Blob([new Uint8Array(8)]), checksum: "ab".repeat(8) };
    expect(isRuntimeInfo({ ...info, boot: "fallback", bootNote: "bad magic", snapshot })).toBe(true);
    expect(isRuntimeInfo({ ...info, snapshot: { ...snapshot, checksum: "not hex" } })).toBe(false);
    expect(isRuntimeInfo({ ...info, pyodideVersion: 314 })).toBe(false);
    expect(isRuntimeInfo({ ...info, boot: "warm" })).toBe(false);
    expect(isRuntimeInfo({ ...info, snapshot: [1, 2] })).toBe(false);
    expect(isFileList([{ path: "a.csv", size: 3, mtimeMs: 1 }])).toBe(true);
    expect(isFileList([{ path: "a.csv", size: -3, mtimeMs: 1 }])).toBe(false);
    expect(isFetchRequest({ id: 1, url: "http://x/pyodide/a" })).toBe(true);
    expect(isFetchRequest({ id: 1, url: "http://x/", method: "POST" })).toBe(false);
    expect(isFetchRequest({ id: "1", url: "http://x/" })).toBe(false);
    expect(isHostReport({ type: "started", sharedMemory: true })).toBe(true);
    expect(isHostReport({ type: "started", sharedMemory: "yes" })).toBe(false);
    expect(isHostReport({ type: "answer", id: -1, value: true })).toBe(false);
  });

  it("the host frame keeps only files of the contract's shape", () => {
    const stdlib = { url: "https://kiln.test/pyodide/python_stdlib.zip", data: new Blob(["zip"]) };
    const snapshot = { data: new Blob(["heap"]), checksum: "0123456789abcdef" };
    for (const files of [
      { kilnFiles: 1, stdlib, snapshot },
      { kilnFiles: 1, stdlib, snapshot: null },
      { kilnFiles: 1, stdlib: null, snapshot: null },
    ]) {
      expect(isHostFiles(files), JSON.stringify(files)).toBe(true);
    }
    for (const files of [
      null,
      { kilnFiles: 1, stdlib },
      { kilnFiles: 2, stdlib, snapshot },
      { kilnFiles: 1, stdlib: { url: stdlib.url, data: new ArrayBuffer(3) }, snapshot: null },
      { kilnFiles: 1, stdlib, snapshot: { data: snapshot.data, checksum: "not hex" } },
      { kilnFiles: 1, stdlib, snapshot: { ...snapshot, extra: true } },
    ]) {
      expect(isHostFiles(files), JSON.stringify(files)).toBe(false);
    }
  });
});
