import { describe, expect, it } from "vitest";
import type { OutputItem } from "../model/output";
import { outputParts } from "./notebooks";

const line = (text: string): OutputItem => ({ kind: "stream", name: "stdout", text });

describe("outputParts", () => {
  it("keeps every item, in order, in parts no larger than asked", () => {
    const items = Array.from({ length: 50 }, (_, i) => line(`${i}`.padEnd(100, ".") + "\n"));
    const parts = outputParts(items, 1000);
    expect(parts.flat()).toEqual(items);
    expect(parts.length).toBeGreaterThan(5);
    for (const part of parts) expect(part.reduce((chars, item) => chars + (item.kind === "stream" ? item.text.length : 0), 0)).toBeLessThanOrEqual(1000);
  });

  it("puts an item larger than a part in a part of its own, and counts a display's data", () => {
    const image: OutputItem = { kind: "display", data: { "image/png": "A".repeat(5000) } };
    const parts = outputParts([line("before\n"), image, line("after\n")], 1000);
    expect(parts).toEqual([[line("before\n")], [image], [line("after\n")]]);
  });

  it("saves no part for no output", () => {
    expect(outputParts([], 1000)).toEqual([]);
  });
});
