import { describe, expect, it } from "vitest";
import { BUNDLE_ENTRIES, DISPLAY_TEXT_CHARS, DROPPED_KEY, RUN_FILE_CHARS, RunLimits } from "../../workers/output-limits";
import type { OutputItem } from "../model/output";
import { MAX_STREAM_ITEMS, STREAM_PIECE_CHARS, STREAMS_JOINED_NOTICE, streamBlocks } from "../model/stream-blocks";
import { capBundle, capStoredOutputs } from "./output-caps";

describe("capBundle", () => {
  it("cuts what the sender did not, and keeps the whole as a file no browser renders", async () => {
    const html = "<i>x</i>".repeat(20_000);
    const { data, cut } = capBundle(new RunLimits(), { "text/html": html });
    expect(data["text/html"]).toHaveLength(DISPLAY_TEXT_CHARS);
    const file = cut?.["text/html"].file;
    expect(file?.type).toBe("application/octet-stream");
    expect(await file?.text()).toBe(html);
    expect(cut?.["text/html"].chars).toBe(html.length);
  });

  it("keeps the sender's files as Blobs, counted against the run's files", async () => {
    const limits = new RunLimits();
    const bytes = new TextEncoder().encode("whole value");
    const { data, cut } = capBundle(limits, { "text/plain": "whole" }, { "text/plain": { chars: 11, file: bytes } });
    expect(data).toEqual({ "text/plain": "whole" });
    expect(await cut?.["text/plain"].file?.text()).toBe("whole value");
    expect(limits.takeFile(RUN_FILE_CHARS - bytes.length)).toBe(true);
    expect(limits.takeFile(1)).toBe(false);
  });

  it("drops a sender's file past the run's limit, and says the value was cut", () => {
    const limits = new RunLimits();
    limits.takeFile(RUN_FILE_CHARS);
    const { cut } = capBundle(limits, { "text/html": "<p>" }, { "text/html": { chars: 5_000_000, file: new Blob(["x"]) } });
    expect(cut).toEqual({ "text/html": { chars: 5_000_000 } });
  });

  it("keeps an image it cuts as its base64 text, and says so", async () => {
    const png = "A".repeat(9 * 1024 * 1024);
    const { data, cut } = capBundle(new RunLimits(), { "image/png": png });
    expect(data).toEqual({});
    expect(cut?.["image/png"].base64).toBe(true);
    expect(cut?.["image/png"].file?.size).toBe(png.length);
  });
});

describe("capStoredOutputs", () => {
  it("caps what an older version stored and keeps the rest as it was", async () => {
    const text = "y".repeat(3 * DISPLAY_TEXT_CHARS);
    const items = [
      { kind: "stream", name: "stdout", text: "hello\n" },
      { kind: "display", data: { "text/plain": text } },
      { kind: "value", data: { "text/plain": "3", junk: 4 } },
    ] as unknown as OutputItem[];
    const capped = capStoredOutputs(items);
    expect(capped[0]).toEqual(items[0]);
    expect(capped[1]).toMatchObject({ kind: "display", data: { "text/plain": text.slice(0, DISPLAY_TEXT_CHARS) }, cut: { "text/plain": { chars: text.length } } });
    expect(await (capped[1] as { cut: Record<string, { file: Blob }> }).cut["text/plain"].file.text()).toBe(text);
    expect(capped[2]).toEqual({ kind: "value", data: { "text/plain": "3" } });
  });

  it("joins stored blocks of text past the cap, in order, after one notice", () => {
    const n = 20_000;
    const line = (i: number) => `${i}\n`;
    // Blocks as an older version kept them: one per switch of stream, with a display among them.
    const items: OutputItem[] = Array.from({ length: n }, (_, i) => ({ kind: "stream", name: i % 2 ? "stderr" : "stdout", text: line(i) }));
    items.splice(10, 0, { kind: "display", data: { "text/plain": "d" } });
    const capped = capStoredOutputs(items);
    const streams = capped.filter((item) => item.kind === "stream");
    const text = streams.map((item) => (item.kind === "stream" ? item.text : "")).join("");
    expect(text).toBe(Array.from({ length: n }, (_, i) => line(i)).join(""));
    expect(capped[10]).toEqual({ kind: "display", data: { "text/plain": "d" } });
    expect(capped.filter((item) => item.kind === "notice")).toEqual([{ kind: "notice", tone: "warning", text: STREAMS_JOINED_NOTICE }]);
    expect(capped[MAX_STREAM_ITEMS + 1]).toMatchObject({ kind: "notice" });
    const afterChars = text.length - streams.slice(0, MAX_STREAM_ITEMS).reduce((sum, item) => sum + (item.kind === "stream" ? item.text.length : 0), 0);
    expect(capped.length - MAX_STREAM_ITEMS - 2).toBeLessThanOrEqual(Math.ceil(afterChars / STREAM_PIECE_CHARS) + 1);
    // Output a run made within the cap (also one that reached it) reads back as it was.
    expect(capStoredOutputs(capped)).toEqual(capped);
    const run: OutputItem[] = [];
    const blocks = streamBlocks(run);
    for (let i = 0; i < 3000; i++) blocks.stream(i % 2 ? "stderr" : "stdout", "z".repeat(i % 7 ? 3 : 9000) + "\n");
    blocks.finish();
    expect(run.length).toBeGreaterThan(MAX_STREAM_ITEMS);
    expect(capStoredOutputs(run)).toEqual(run);
  });

  it("reads back what it stored the same, files and all", () => {
    const file = new Blob(["whole"], { type: "application/octet-stream" });
    const items: OutputItem[] = [{ kind: "display", data: { "text/html": "<p>" }, cut: { "text/html": { chars: 200_000, file } } }];
    expect(capStoredOutputs(items)).toEqual(items);
    expect((capStoredOutputs(items)[0] as { cut: Record<string, { file: Blob }> }).cut["text/html"].file).toBe(file);
  });

  it("bounds saved output with a huge key and many entries: MIME types only, at most a bundle's entries, dropped ones counted once", () => {
    const huge = "k".repeat(5_000_000);
    const many = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`c${i}`, "b"]));
    const cuts = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`text/c${i}`, { chars: 1 }]));
    const items: OutputItem[] = [
      { kind: "display", data: { [huge]: "a".repeat(DISPLAY_TEXT_CHARS + 1) } },
      { kind: "display", data: many, cut: cuts },
    ];
    expect(Object.keys(items[1].kind === "display" ? items[1].data : {})).toHaveLength(20_000);
    const [first, second] = capStoredOutputs(items) as { data: Record<string, string>; cut?: Record<string, { chars: number }> }[];
    expect(first).toEqual({ kind: "display", data: {}, cut: { [DROPPED_KEY]: { chars: 1 } } });
    expect(second.data).toEqual({});
    expect(Object.keys(second.cut ?? {})).toHaveLength(BUNDLE_ENTRIES + 1);
    expect(second.cut?.[DROPPED_KEY]).toEqual({ chars: 20_000 + 20_000 - BUNDLE_ENTRIES });
    expect(JSON.stringify(second).length).toBeLessThan(5_000);
  });
});

describe("capStoredOutputs on errors, prompts and notices", () => {
  it("cuts what an earlier version saved whole, and makes malformed ones harmless", () => {
    const huge = "x\n".repeat(3_000_000);
    const stored = [
      { kind: "error", error: { ename: "ValueError", evalue: huge, traceback: huge } },
      { kind: "input", prompt: huge, answer: "Ada" },
      { kind: "notice", tone: "warning", text: `Python crashed: ${huge}` },
      { kind: "error", error: "not an error" },
    ] as unknown as OutputItem[];
    const capped = capStoredOutputs(stored);
    // 6,000,000 characters each went in; a few tens of thousands come out (JSON doubles each line break).
    expect(JSON.stringify(capped).length).toBeLessThan(100_000);
    expect(capped[0]).toMatchObject({ kind: "error", error: { ename: "ValueError" } });
    expect(capped[1]).toMatchObject({ kind: "input", answer: "Ada" });
    expect(capped[3]).toEqual({ kind: "error", error: { ename: "", evalue: "", traceback: "" } });
  });
});
