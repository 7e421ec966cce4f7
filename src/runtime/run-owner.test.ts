import { describe, expect, it, vi } from "vitest";
import type { WorkerEvent } from "../../workers/python-api";
import { DISPLAY_TEXT_CHARS } from "../../workers/output-limits";
import type { OutputItem } from "../model/output";
import { MAX_RUN_OUTPUTS, NOTIFY_INTERVAL_MS, RunOwner } from "./run-owner";

describe("RunOwner", () => {
  it("shows what the run printed, then how it ended, and counts it", async () => {
    const owner = new RunOwner();
    const finished = await owner.run(async (_signal, onEvent) => {
      onEvent({ type: "stream", name: "stdout", text: "hello\n" });
      return { status: "ok", value: { "text/plain": "42" }, durationMs: 5 };
    });
    expect(finished.outcome.status).toBe("ok");
    expect(owner.current).toMatchObject({ running: false, finishedRuns: 1 });
    expect(owner.current.outputs).toEqual([
      { kind: "stream", name: "stdout", text: "hello\n" },
      { kind: "value", data: { "text/plain": "42" } },
    ]);
  });

  it("keeps no progress events, and text between them stays in one block", async () => {
    const owner = new RunOwner();
    const finished = await owner.run(async (_signal, onEvent) => {
      for (let i = 0; i < 4000; i++) {
        onEvent({ type: "progress", message: "." });
        onEvent({ type: "stream", name: "stdout", text: "x\n" });
      }
      return { status: "ok", durationMs: 5 };
    });
    expect(finished.events).toHaveLength(4000);
    expect(finished.events.every((event) => event.type === "stream")).toBe(true);
    expect(owner.current.outputs).toEqual([{ kind: "stream", name: "stdout", text: "x\n".repeat(4000) }]);
  });

  it("caps what the run sends whatever its sender did, and keeps the whole value as a file", async () => {
    const owner = new RunOwner();
    const html = "<i>x</i>".repeat(1_500_000);
    const plain = "y".repeat(3 * DISPLAY_TEXT_CHARS);
    const finished = await owner.run(async (_signal, onEvent) => {
      onEvent({ type: "display", data: { "text/html": html } });
      return { status: "ok", value: { "text/plain": plain }, durationMs: 5 };
    });
    const [display, value] = owner.current.outputs as Extract<OutputItem, { kind: "display" | "value" }>[];
    expect(display.data["text/html"]).toHaveLength(DISPLAY_TEXT_CHARS);
    expect(display.cut?.["text/html"].chars).toBe(12_000_000);
    expect(display.cut?.["text/html"].file?.size).toBe(12_000_000);
    expect(value.data["text/plain"]).toHaveLength(DISPLAY_TEXT_CHARS);
    expect(await value.cut?.["text/plain"].file?.text()).toBe(plain);
    // What the model gets is cut the same.
    expect(finished.events).toEqual([{ type: "display", data: display.data, cut: display.cut }]);
    expect(finished.outcome.valueCut).toEqual(value.cut);
  });

  it("updates replace a display in the outputs and the events, and a clear drops what came before", async () => {
    const owner = new RunOwner();
    const finished = await owner.run(async (_signal, onEvent) => {
      onEvent({ type: "stream", name: "stdout", text: "gone\n" });
      onEvent({ type: "clear-output" });
      onEvent({ type: "display", data: { "text/plain": "0%" }, displayId: "bar" });
      // More updates than a run shows displays: none is dropped, none is added.
      for (let i = 1; i <= MAX_RUN_OUTPUTS * 3; i++) onEvent({ type: "update-display", displayId: "bar", data: { "text/plain": `${i}` } });
      onEvent({ type: "update-display", displayId: "bar", data: { "text/html": "x".repeat(DISPLAY_TEXT_CHARS + 5) } });
      return { status: "ok", durationMs: 5 };
    });
    const display = owner.current.outputs[0] as Extract<OutputItem, { kind: "display" }>;
    expect(owner.current.outputs).toHaveLength(1);
    expect(display.displayId).toBe("bar");
    // Updates are capped as displays are.
    expect(display.data["text/html"]).toHaveLength(DISPLAY_TEXT_CHARS);
    expect(display.cut?.["text/html"].chars).toBe(DISPLAY_TEXT_CHARS + 5);
    expect(finished.events).toEqual([{ type: "display", displayId: "bar", data: display.data, cut: display.cut }]);
    expect(finished.droppedOutputs).toBe(0);
  });

  it("a run that fails outside Python ends with its reason shown, not an empty output", async () => {
    const owner = new RunOwner();
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const finished = await owner.run(async () => {
      throw new Error("the worker went away");
    });
    logged.mockRestore();
    expect(finished.outcome).toMatchObject({ status: "crashed", error: { evalue: "the worker went away" } });
    expect(owner.current).toMatchObject({ running: false, finishedRuns: 1 });
    expect(owner.current.outputs).toContainEqual({ kind: "notice", tone: "warning", text: "Python crashed: the worker went away." });
    // The next run starts as usual.
    await owner.run(async () => ({ status: "ok", durationMs: 1 }));
    expect(owner.current.finishedRuns).toBe(2);
  });

  it("a run of 20 000 small displays shows the first 1000 and says so, telling its views a few times, not 20 000", async () => {
    const owner = new RunOwner();
    let told = 0;
    owner.subscribe(() => told++);
    const started = performance.now();
    const finished = await owner.run(async (_signal, onEvent) => {
      for (let i = 0; i < 20_000; i++) onEvent({ type: "display", data: { "text/plain": String(i) } });
      return { status: "ok", durationMs: 1 };
    });
    const displays = owner.current.outputs.filter((item) => item.kind === "display");
    expect(displays).toHaveLength(MAX_RUN_OUTPUTS);
    expect(displays[MAX_RUN_OUTPUTS - 1]).toEqual({ kind: "display", data: { "text/plain": "999" } });
    expect(owner.current.outputs.filter((item) => item.kind === "notice")).toEqual([
      { kind: "notice", tone: "warning", text: "Output truncated: this run showed more than 1000 outputs; the rest is not shown." },
    ]);
    expect(finished.droppedOutputs).toBe(19_000);
    expect(finished.events).toHaveLength(MAX_RUN_OUTPUTS);
    // Told when it started and when it ended: the displays, all within one tick, came with the end.
    expect(told).toBe(2);
    expect(performance.now() - started).toBeLessThan(2000);
    // A prompt after them is still shown: Python waits for its answer.
    const asked = await owner.run(async (_signal, onEvent) => {
      for (let i = 0; i < 1500; i++) onEvent({ type: "display", data: { "text/plain": String(i) } });
      onEvent({ type: "input-request", prompt: "continue? " });
      return { status: "ok", durationMs: 1 };
    });
    expect(asked.outputs.filter((item) => item.kind === "input")).toMatchObject([{ kind: "input", prompt: "continue? " }]);
  });

  it("output that streams over time reaches the views within an interval, and an input prompt at once", async () => {
    vi.useFakeTimers();
    try {
      const owner = new RunOwner();
      const seen: number[] = [];
      owner.subscribe(() => seen.push(owner.current.outputs.length));
      let emit!: (event: WorkerEvent) => void;
      let finish!: () => void;
      const run = owner.run(
        (_signal, onEvent) =>
          new Promise((resolve) => {
            emit = onEvent;
            finish = () => resolve({ status: "ok", durationMs: 1 });
          }),
      );
      await Promise.resolve();
      seen.length = 0;
      emit({ type: "display", data: { "text/plain": "a" } });
      emit({ type: "display", data: { "text/plain": "b" } });
      expect(seen).toEqual([]);
      vi.advanceTimersByTime(NOTIFY_INTERVAL_MS);
      expect(seen).toEqual([2]);
      emit({ type: "input-request", prompt: "name? " });
      expect(seen).toEqual([2, 3]);
      finish();
      await run;
      vi.advanceTimersByTime(NOTIFY_INTERVAL_MS);
      expect(seen).toEqual([2, 3, 3]);
    } finally {
      vi.useRealTimers();
    }
  });
});
