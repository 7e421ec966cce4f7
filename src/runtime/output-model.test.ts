import { describe, expect, it } from "vitest";
import type { WorkerEvent } from "../../workers/python-api";
import type { OutputItem } from "../model/output";
import {
  answerInput,
  applyEvent,
  applyEvents,
  applyResult,
  MAX_STREAM_ITEMS,
  STREAMS_JOINED_NOTICE, formatBytes, formatDuration, formatLocalTime, STREAM_PIECE_CHARS, statusLine } from "./output-model";

describe("applyEvent", () => {
  it("merges consecutive text of one stream and keeps the order of streams", () => {
    let items = applyEvent([], { type: "stream", name: "stdout", text: "a" });
    items = applyEvent(items, { type: "stream", name: "stdout", text: "b" });
    items = applyEvent(items, { type: "stream", name: "stderr", text: "c" });
    expect(items).toEqual([
      { kind: "stream", name: "stdout", text: "ab" },
      { kind: "stream", name: "stderr", text: "c" },
    ]);
  });

  it("starts a new piece at a line break once a piece is large", () => {
    const line = "x".repeat(99) + "\n";
    const fits = Math.floor(STREAM_PIECE_CHARS / 100);
    let items = applyEvent([], { type: "stream", name: "stdout", text: line.repeat(fits) });
    items = applyEvent(items, { type: "stream", name: "stdout", text: line });
    items = applyEvent(items, { type: "stream", name: "stdout", text: "partial" });
    expect(items).toEqual([
      { kind: "stream", name: "stdout", text: line.repeat(fits) },
      { kind: "stream", name: "stdout", text: line + "partial" },
    ]);
    // A line that never breaks stays in one piece.
    const long = applyEvent([], { type: "stream", name: "stdout", text: "y".repeat(STREAM_PIECE_CHARS * 2) });
    expect(applyEvent(long, { type: "stream", name: "stdout", text: "z" })).toHaveLength(1);
  });

  it("cuts a large batch of text into pieces at line breaks, none larger than a piece", () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `${i}\n`).join("") + "tail";
    const items = applyEvent([{ kind: "stream", name: "stdout", text: "head " }], { type: "stream", name: "stdout", text });
    expect(items.length).toBeGreaterThan(text.length / STREAM_PIECE_CHARS);
    expect(items.map((item) => (item.kind === "stream" ? item.text : "")).join("")).toBe("head " + text);
    for (const item of items.slice(0, -1)) {
      expect(item).toMatchObject({ kind: "stream", name: "stdout", text: expect.stringMatching(/\n$/) });
      if (item.kind === "stream") expect(item.text.length).toBeLessThanOrEqual(STREAM_PIECE_CHARS);
    }
    expect(items.at(-1)).toMatchObject({ text: expect.stringMatching(/tail$/) });
  });

  it("turns truncation into a visible notice", () => {
    const items = applyEvent([], { type: "truncated", limitBytes: 1024 * 1024 });
    expect(items).toEqual([{ kind: "notice", tone: "warning", text: expect.stringContaining("Output truncated") }]);
    expect(items[0]).toMatchObject({ text: expect.stringContaining("1 MiB") });
  });

  it("adds many events at once, in order, as adding them one by one would", () => {
    const events: WorkerEvent[] = [
      { type: "stream", name: "stdout", text: "a" },
      { type: "stream", name: "stdout", text: "b\n" },
      { type: "stream", name: "stderr", text: "c\n" },
      { type: "display", data: { "text/plain": "d" } },
      { type: "stream", name: "stderr", text: "e" },
    ];
    const start: OutputItem[] = [{ kind: "stream", name: "stdout", text: "0" }];
    expect(applyEvents(start, events)).toEqual(events.reduce(applyEvent, start));
    expect(applyEvents(start, events)).toEqual([
      { kind: "stream", name: "stdout", text: "0ab\n" },
      { kind: "stream", name: "stderr", text: "c\n" },
      { kind: "display", data: { "text/plain": "d" } },
      { kind: "stream", name: "stderr", text: "e" },
    ]);
    expect(start).toEqual([{ kind: "stream", name: "stdout", text: "0" }]);
  });

  it("keeps stdout and stderr apart up to a cap of blocks, then shows the rest together after one notice", () => {
    const n = MAX_STREAM_ITEMS + 5000;
    const line = (i: number): WorkerEvent => ({ type: "stream", name: i % 2 ? "stderr" : "stdout", text: `${"ab"[i % 2]}${i >> 1}\n` });
    // In batches, as the page adds them, and one by one: the same outputs.
    let batched: OutputItem[] = [];
    for (let i = 0; i < n; i += 700) batched = applyEvents(batched, Array.from({ length: Math.min(700, n - i) }, (_, j) => line(i + j)));
    let single: OutputItem[] = [];
    for (let i = 0; i < n; i++) single = applyEvent(single, line(i));
    expect(single).toEqual(batched);

    const streams = batched.filter((item) => item.kind === "stream");
    expect(batched.filter((item) => item.kind === "notice")).toEqual([{ kind: "notice", tone: "warning", text: STREAMS_JOINED_NOTICE }]);
    expect(batched[MAX_STREAM_ITEMS]).toMatchObject({ kind: "notice" });
    // After the notice, one block whatever the stream, in pieces as any long text is.
    const after = batched.slice(MAX_STREAM_ITEMS + 1);
    const afterChars = after.reduce((sum, item) => sum + (item.kind === "stream" ? item.text.length : 0), 0);
    expect(after.length).toBeLessThanOrEqual(Math.ceil(afterChars / STREAM_PIECE_CHARS) + 1);
    expect(batched.slice(0, 2)).toEqual([
      { kind: "stream", name: "stdout", text: "a0\n" },
      { kind: "stream", name: "stderr", text: "b0\n" },
    ]);
    // Nothing lost, nothing out of order.
    const text = streams.map((item) => (item.kind === "stream" ? item.text : "")).join("");
    expect(text).toBe(Array.from({ length: n }, (_, i) => (line(i) as { text: string }).text).join(""));
  });

  it("keeps a block open across events that add nothing, so they cannot split text past the cap", () => {
    const n = 20_000;
    const progress: WorkerEvent = { type: "progress", message: "." };
    const piece: WorkerEvent = { type: "stream", name: "stdout", text: "x\n" };
    const events = Array.from({ length: n }, () => [progress, piece]).flat();
    // Added one notification at a time (the last block is reopened by each) and all at once.
    let single: OutputItem[] = [];
    for (let i = 0; i < events.length; i += 2) single = applyEvents(single, events.slice(i, i + 2));
    const whole = applyEvents([], events);
    expect(single).toEqual(whole);
    const text = "x\n".repeat(n);
    expect(whole.every((item) => item.kind === "stream" && item.name === "stdout")).toBe(true);
    expect(whole.map((item) => (item.kind === "stream" ? item.text : "")).join("")).toBe(text);
    expect(whole.length).toBe(Math.ceil(text.length / STREAM_PIECE_CHARS));

    // Switching streams with progress between them: still at most the cap of blocks, then the notice.
    const line = (i: number): WorkerEvent[] => [progress, { type: "stream", name: i % 2 ? "stderr" : "stdout", text: `${i}\n` }];
    const switching = applyEvents([], Array.from({ length: MAX_STREAM_ITEMS * 5 }, (_, i) => line(i)).flat());
    expect(switching[MAX_STREAM_ITEMS]).toEqual({ kind: "notice", tone: "warning", text: STREAMS_JOINED_NOTICE });
    const after = switching.slice(MAX_STREAM_ITEMS + 1);
    const afterChars = after.reduce((sum, item) => sum + (item.kind === "stream" ? item.text.length : 0), 0);
    expect(after.length).toBeLessThanOrEqual(Math.ceil(afterChars / STREAM_PIECE_CHARS) + 1);
  });

  it("records the answer to the pending input prompt", () => {
    const items = answerInput(applyEvent([], { type: "input-request", prompt: "Name? " }), "Ada");
    expect(items).toEqual([{ kind: "input", prompt: "Name? ", answer: "Ada" }]);
  });
});

describe("applyResult", () => {
  it("adds the value, the error, and how the run ended", () => {
    const ok = applyResult([], { status: "ok", value: { "text/plain": "1" }, durationMs: 5 });
    expect(ok).toEqual([{ kind: "value", data: { "text/plain": "1" } }]);
    const error = { ename: "ValueError", evalue: "bad", traceback: "ValueError: bad" };
    expect(applyResult([], { status: "error", error, durationMs: 5 })).toEqual([{ kind: "error", error }]);
    const interrupted = applyResult([], { status: "interrupted", error: { ...error, ename: "KeyboardInterrupt" }, durationMs: 1500 });
    expect(interrupted).toEqual([{ kind: "notice", tone: "warning", text: "Interrupted after 1.5 s. Variables are kept." }]);
  });

  it("names missing modules and restored variables", () => {
    expect(statusLine({ status: "unavailable", missingModules: ["torch"], durationMs: 1 })).toContain("torch");
    expect(
      statusLine({ status: "crashed", durationMs: 1, restored: { kept: ["a", "b"], lost: ["gen"] } }),
    ).toMatch(/Variables restored: a, b\. Lost: gen\./);
  });

  it("says when a run never started, and when a Restart cleared its variables", () => {
    const stop = { ename: "KeyboardInterrupt", evalue: "Stopped before it started.", traceback: "" };
    expect(statusLine({ status: "interrupted", error: stop, durationMs: 4100, notStarted: true })).toBe("Stopped before it started.");
    expect(statusLine({ status: "interrupted", error: stop, durationMs: 2000, restarted: true })).toBe(
      "Interrupted after 2 s. Python was restarted: its variables are cleared.",
    );
  });
});

describe("formatting", () => {
  it("formats sizes and durations for people", () => {
    expect(formatBytes(512)).toBe("512 bytes");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatDuration(12.4)).toBe("12 ms");
    expect(formatDuration(61_000)).toBe("1 min 1 s");
    expect(formatLocalTime(new Date(2026, 0, 5, 9, 7, 30).getTime())).toBe("2026-01-05 09:07");
  });
});

describe("display updates and clears", () => {
  const display = (text: string, displayId?: string): WorkerEvent => ({ type: "display", data: { "text/plain": text }, ...(displayId && { displayId }) });

  it("an update replaces every display of its id in place, adding nothing", () => {
    let items = applyEvents([], [display("a", "p"), { type: "stream", name: "stdout", text: "between\n" }, display("b"), display("a2", "p")]);
    items = applyEvents(items, [{ type: "update-display", displayId: "p", data: { "text/plain": "new" } }]);
    expect(items).toEqual([
      { kind: "display", data: { "text/plain": "new" }, displayId: "p" },
      { kind: "stream", name: "stdout", text: "between\n" },
      { kind: "display", data: { "text/plain": "b" } },
      { kind: "display", data: { "text/plain": "new" }, displayId: "p" },
    ]);
    // An id shown nowhere in the run: nothing changes.
    expect(applyEvent(items, { type: "update-display", displayId: "other", data: { "text/plain": "x" } })).toEqual(items);
  });

  it("ten thousand updates in one batch leave one display", () => {
    const updates: WorkerEvent[] = Array.from({ length: 10_000 }, (_, i) => ({ type: "update-display", displayId: "bar", data: { "text/plain": `${i}` } }));
    const items = applyEvents([], [display("0", "bar"), ...updates, display("later", "bar"), ...updates.slice(0, 3)]);
    expect(items).toEqual([
      { kind: "display", data: { "text/plain": "2" }, displayId: "bar" },
      { kind: "display", data: { "text/plain": "2" }, displayId: "bar" },
    ]);
  });

  it("a clear removes what the run showed before it, text and displays", () => {
    const items = applyEvents([], [
      { type: "stream", name: "stdout", text: "step 1\n" },
      display("chart 1"),
      { type: "clear-output" },
      { type: "stream", name: "stdout", text: "step 2\n" },
      { type: "clear-output" },
      { type: "stream", name: "stdout", text: "step 3\n" },
      display("chart 3", "c"),
    ]);
    expect(items).toEqual([
      { kind: "stream", name: "stdout", text: "step 3\n" },
      { kind: "display", data: { "text/plain": "chart 3" }, displayId: "c" },
    ]);
    expect(applyEvent(applyEvent(items, { type: "clear-output" }), { type: "update-display", displayId: "c", data: {} })).toEqual([]);
  });
});
