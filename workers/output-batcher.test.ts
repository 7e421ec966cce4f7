import { describe, expect, it } from "vitest";
import { FLUSH_INTERVAL_MS, MAX_RUNS_PER_FLUSH, OutputBatcher } from "./output-batcher";
import type { PostedEvent } from "./python-api";

function setup(limit = 1000) {
  const events: PostedEvent[] = [];
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
    expect(events).toEqual([{ type: "streams", runs: [["stdout", "abc"]] }]);
  });

  it("keeps stdout and stderr in the order they were written, in one event per flush", () => {
    const { events, batcher, bytes } = setup();
    batcher.write("stdout", bytes("1"));
    batcher.write("stderr", bytes("2"));
    batcher.write("stderr", bytes("2"));
    batcher.write("stdout", bytes("3"));
    batcher.flush();
    expect(events).toEqual([{ type: "streams", runs: [["stdout", "1"], ["stderr", "22"], ["stdout", "3"]] }]);
  });

  it("posts output that switches streams at every line as one event per interval", () => {
    const { events, batcher, bytes, advance } = setup(1 << 20);
    for (let i = 0; i < 10_000; i++) {
      batcher.write("stdout", bytes(`a${i}\n`));
      batcher.write("stderr", bytes(`b${i}\n`));
      if (i % 1000 === 999) advance(FLUSH_INTERVAL_MS);
    }
    batcher.flush();
    expect(events.length).toBe(10);
    const runs = events.flatMap((event) => (event.type === "streams" ? event.runs : []));
    expect(runs.length).toBe(20_000);
    expect(runs.slice(-2)).toEqual([["stdout", "a9999\n"], ["stderr", "b9999\n"]]);
  });

  it("posts at most the page's bound of runs in one event, however quickly Python switches streams", () => {
    const { events, batcher, bytes } = setup(1 << 20);
    const writes = MAX_RUNS_PER_FLUSH * 2 + 10;
    for (let i = 0; i < writes; i++) batcher.write(i % 2 ? "stderr" : "stdout", bytes(`${i}\n`));
    batcher.flush();
    const sizes = events.map((event) => (event.type === "streams" ? event.runs.length : 0));
    expect(sizes).toEqual([MAX_RUNS_PER_FLUSH, MAX_RUNS_PER_FLUSH, 10]);
    const text = events.flatMap((event) => (event.type === "streams" ? event.runs.map(([, t]) => t) : [])).join("");
    expect(text).toBe(Array.from({ length: writes }, (_, i) => `${i}\n`).join(""));
  });

  it("posts nothing for a flush with no text", () => {
    const { events, batcher, bytes } = setup();
    batcher.flush();
    batcher.write("stdout", bytes("€").subarray(0, 1));
    batcher.flush();
    expect(events).toEqual([]);
  });

  it("joins a multi-byte character split across writes", () => {
    const { events, batcher, bytes } = setup();
    const euro = bytes("€");
    batcher.write("stdout", euro.subarray(0, 1));
    batcher.write("stdout", euro.subarray(1));
    batcher.flush();
    expect(events).toEqual([{ type: "streams", runs: [["stdout", "€"]] }]);
  });

  it("caps a run's output, says so once, and counts what it dropped", () => {
    const { events, batcher, bytes } = setup(10);
    batcher.write("stdout", bytes("0123456"));
    batcher.write("stdout", bytes("789abc"));
    batcher.write("stdout", bytes("more"));
    batcher.flush();
    expect(events).toEqual([
      { type: "streams", runs: [["stdout", "0123456789"]] },
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
