import { describe, expect, it } from "vitest";
import {
  BUNDLE_ENTRIES,
  cutFileName,
  cutSummary,
  DISPLAY_IMAGE_CHARS,
  DROPPED_KEY,
  entryChars,
  mimeType, DISPLAY_TEXT_CHARS, groupDigits, RUN_DISPLAY_CHARS, RUN_FILE_CHARS, RunLimits } from "./output-limits";

describe("RunLimits", () => {
  it("keeps a bundle within the limits as it is", () => {
    const bundle = { "text/html": "<b>hi</b>", "text/plain": "hi", "image/png": "iVBORw0KGgo=" };
    expect(new RunLimits().cap(bundle)).toEqual({ data: bundle, cut: {}, dropped: 0 });
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
    expect(next.data["text/plain"]).toHaveLength(RUN_DISPLAY_CHARS - fits * DISPLAY_TEXT_CHARS - (fits + 1) * entryChars("text/plain", ""));
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

describe("bundle keys", () => {
  it("keeps keys that are MIME types, normalised, and drops the rest, counted", () => {
    expect(mimeType(" Text/HTML; charset=utf-8")).toBe("text/html");
    expect(mimeType("application/vnd.jupyter.widget-view+json")).toBe("application/vnd.jupyter.widget-view+json");
    for (const key of ["k".repeat(5_000_000), "c1", "text/", "a/b c", `text/${"x".repeat(100)}`]) expect(mimeType(key)).toBeUndefined();
    // A 5,000,000-character key with a value just over the text limit: nothing of the key is kept.
    const { data, cut, dropped } = new RunLimits().cap({ ["k".repeat(5_000_000)]: "a".repeat(DISPLAY_TEXT_CHARS + 1), "text/plain": "x" });
    expect(data).toEqual({ "text/plain": "x" });
    expect(cut).toEqual({});
    expect(dropped).toBe(1);
  });

  it("keeps at most BUNDLE_ENTRIES representations of a bundle of 20,000, and counts their keys in the budget", () => {
    const bundle = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`text/c${i}`, "b"]));
    expect(Object.keys(bundle)).toHaveLength(20_000);
    const limits = new RunLimits();
    const { data, cut, dropped } = limits.cap(bundle);
    expect(Object.keys(data)).toHaveLength(BUNDLE_ENTRIES);
    expect(cut).toEqual({});
    expect(dropped).toBe(20_000 - BUNDLE_ENTRIES);
    // Tiny entries are not free: enough of them use up the run's budget.
    const some = Object.fromEntries(Object.entries(bundle).slice(0, BUNDLE_ENTRIES));
    const many = Math.ceil(RUN_DISPLAY_CHARS / entryChars("text/c0", "b") / BUNDLE_ENTRIES);
    for (let i = 0; i < many; i++) limits.cap(some);
    const after = limits.cap({ "text/plain": "small" });
    expect(after.data).toEqual({});
    expect(after.cut["text/plain"]).toEqual({ chars: 5, whole: "small" });
  });

  it("names only MIME types in what a cut says", () => {
    expect(cutSummary("k".repeat(3_000_000), 100_001, 0, true)).toBe(
      "This unnamed output is 100,001 characters, over the limit: none of it is kept with the output, and the whole value is kept as a file to download.",
    );
    expect(cutSummary("text/x-foo", 10, 0, true)).toMatch(/^This text\/x-foo output is 10 characters/);
    expect(cutSummary(DROPPED_KEY, 19_968, 0, false)).toBe(
      "19,968 representations of this output were dropped: an output keeps at most 32, each named by a MIME type (such as text/plain) of at most 100 characters.",
    );
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
