import { describe, expect, it } from "vitest";
import { FLUSH_INTERVAL_MS, OutputBatcher } from "./output-batcher";
import type { WorkerEvent } from "./python-api";

function setup(limit = 1000) {
  const events: WorkerEvent[] = [];
  let now = 0;
  const batcher = new OutputBatcher((event) => events.push(event), () => now);
  batcher.begin(limit);
  const bytes = (text: string) => new TextEncoder().encode(text);
  return { events, batcher, bytes, advance: (ms: number) => (now += ms) };
}

describe("OutputBatcher", () => {
  it("holds quick writes together and posts them once the interval has passed", () => {
    const { events, batcher, bytes, advance } = setup();
    batcher.write("stdout", bytes("a"));
    batcher.write("stdout", bytes("b"));
    expect(events).toEqual([]);
    advance(FLUSH_INTERVAL_MS);
    batcher.write("stdout", bytes("c"));
    expect(events).toEqual([{ type: "stream", name: "stdout", text: "abc" }]);
  });

  it("keeps stdout and stderr in the order they were written", () => {
    const { events, batcher, bytes } = setup();
    batcher.write("stdout", bytes("1"));
    batcher.write("stderr", bytes("2"));
    batcher.write("stdout", bytes("3"));
    batcher.flush();
    expect(events.map((e) => e.type === "stream" && `${e.name}:${e.text}`)).toEqual(["stdout:1", "stderr:2", "stdout:3"]);
  });

  it("joins a multi-byte character split across writes", () => {
    const { events, batcher, bytes } = setup();
    const euro = bytes("€");
    batcher.write("stdout", euro.subarray(0, 1));
    batcher.write("stdout", euro.subarray(1));
    batcher.flush();
    expect(events).toEqual([{ type: "stream", name: "stdout", text: "€" }]);
  });

  it("caps a run's output, says so once, and counts what it dropped", () => {
    const { events, batcher, bytes } = setup(10);
    batcher.write("stdout", bytes("0123456"));
    batcher.write("stdout", bytes("789abc"));
    batcher.write("stdout", bytes("more"));
    batcher.flush();
    expect(events).toEqual([
      { type: "stream", name: "stdout", text: "0123456789" },
      { type: "truncated", limitBytes: 10 },
    ]);
    expect(batcher.droppedBytes).toBe(7);
    batcher.begin(10);
    expect(batcher.droppedBytes).toBe(0);
  });

  it("says so also when the cap keeps nothing at all", () => {
    const { events, batcher, bytes } = setup(0);
    batcher.write("stdout", bytes("hello"));
    batcher.write("stderr", bytes("again"));
    batcher.flush();
    expect(events).toEqual([{ type: "truncated", limitBytes: 0 }]);
    expect(batcher.droppedBytes).toBe(10);
  });
});
