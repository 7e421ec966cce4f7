import { describe, expect, it } from "vitest";
import { cutFileName, cutSummary, DISPLAY_IMAGE_CHARS, DISPLAY_TEXT_CHARS, groupDigits, RUN_DISPLAY_CHARS, RUN_FILE_CHARS, RunLimits } from "./output-limits";

describe("RunLimits", () => {
  it("keeps a bundle within the limits as it is", () => {
    const bundle = { "text/html": "<b>hi</b>", "text/plain": "hi", "image/png": "iVBORw0KGgo=" };
    expect(new RunLimits().cap(bundle)).toEqual({ data: bundle, cut: {} });
  });

  it("cuts long text to its limit and keeps the whole of it to make a file", () => {
    const html = "<i>x</i>".repeat(1_500_000);
    const { data, cut } = new RunLimits().cap({ "text/html": html, "text/plain": "<HTML>" });
    expect(data["text/html"]).toBe(html.slice(0, DISPLAY_TEXT_CHARS));
    expect(data["text/plain"]).toBe("<HTML>");
    expect(cut).toEqual({ "text/html": { chars: 12_000_000, whole: html } });
  });

  it("never cuts text between the halves of a surrogate pair", () => {
    const text = "a".repeat(DISPLAY_TEXT_CHARS - 1) + "😀".repeat(10);
    const { data } = new RunLimits().cap({ "text/plain": text });
    expect(data["text/plain"]).toBe("a".repeat(DISPLAY_TEXT_CHARS - 1));
  });

  it("keeps none of an image over its limit", () => {
    const png = "A".repeat(DISPLAY_IMAGE_CHARS + 4);
    const { data, cut } = new RunLimits().cap({ "image/png": png, "text/plain": "<Figure>" });
    expect(data).toEqual({ "text/plain": "<Figure>" });
    expect(cut["image/png"].chars).toBe(png.length);
  });

  it("counts a run's displays together: past the run's limit, nothing more is kept inline", () => {
    const limits = new RunLimits();
    const text = "z".repeat(DISPLAY_TEXT_CHARS);
    const fits = Math.floor(RUN_DISPLAY_CHARS / DISPLAY_TEXT_CHARS);
    for (let i = 0; i < fits; i++) expect(limits.cap({ "text/plain": text }).cut).toEqual({});
    const next = limits.cap({ "text/plain": text });
    expect(next.data["text/plain"]).toHaveLength(RUN_DISPLAY_CHARS - fits * DISPLAY_TEXT_CHARS);
    expect(next.cut["text/plain"].whole).toBe(text);
    const after = limits.cap({ "text/plain": "small" });
    expect(after.data).toEqual({});
    expect(after.cut["text/plain"]).toEqual({ chars: 5, whole: "small" });
  });

  it("keeps files while the run's files stay under their limit", () => {
    const limits = new RunLimits();
    expect(limits.takeFile(RUN_FILE_CHARS - 10)).toBe(true);
    const { cut } = limits.cap({ "text/plain": "q".repeat(DISPLAY_TEXT_CHARS + 11) });
    expect(cut["text/plain"]).toEqual({ chars: DISPLAY_TEXT_CHARS + 11 });
    expect(limits.takeFile(10)).toBe(true);
    expect(limits.takeFile(1)).toBe(false);
  });
});

describe("what a cut says", () => {
  it("names the kind, the whole size and what is kept", () => {
    expect(cutSummary("text/html", 12_000_000, 100_000, true)).toBe(
      "This HTML output is 12,000,000 characters, over the limit: only its first 100,000 are kept with the output, and the whole value is kept as a file to download.",
    );
    expect(cutSummary("image/png", 9_000_000, 0, false)).toBe(
      "This PNG output is 9,000,000 characters, over the limit: none of it is kept with the output, and it was not kept: the run had already kept 128 MiB of such files.",
    );
    expect(cutSummary("application/x-thing", 200_000, 100_000, true)).toContain("This application/x-thing output");
  });

  it("groups digits and names files by type", () => {
    expect(groupDigits(0)).toBe("0");
    expect(groupDigits(999)).toBe("999");
    expect(groupDigits(1000)).toBe("1,000");
    expect(groupDigits(60_000_000)).toBe("60,000,000");
    expect(cutFileName("text/html")).toBe("output.html");
    expect(cutFileName("text/plain")).toBe("output.txt");
    expect(cutFileName("image/png", true)).toBe("output.png.base64");
  });
});
