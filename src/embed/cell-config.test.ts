import { describe, expect, it } from "vitest";
import { cellFragment, newSessionToken, parseCellFragment, type CellConfig } from "./cell-config";
import { checkOutcome } from "./shared-session";

const config: CellConfig = {
  token: newSessionToken(),
  lead: true,
  name: "exercise-1",
  number: 2,
  code: "print('a & b # c')\n",
  setup: "x = 1",
  check: "assert x == 1",
  hint: "Think.",
  solution: "x = 1",
  readonly: false,
  autorun: true,
  hideCode: false,
  preloadVisible: true,
  theme: "dark",
  fontSizePx: 18,
  hostOrigin: "https://course.example",
};

describe("a cell's configuration in its frame's URL fragment", () => {
  it("reads back what embed.js wrote", () => {
    expect(parseCellFragment(cellFragment(config))).toEqual(config);
  });

  it("makes tokens of 128 random bits, never the same twice", () => {
    const tokens = new Set(Array.from({ length: 100 }, newSessionToken));
    expect(tokens.size).toBe(100);
    for (const token of tokens) expect(token).toMatch(/^[0-9a-f]{32}$/);
  });

  it("is no cell (a plain widget) when the fragment is absent, malformed or its token too short to be unguessable", () => {
    expect(parseCellFragment("")).toBeUndefined();
    expect(parseCellFragment("#other")).toBeUndefined();
    expect(parseCellFragment("#kiln-cell=%7Bnot json")).toBeUndefined();
    expect(parseCellFragment(cellFragment({ ...config, token: "short" }))).toBeUndefined();
    expect(parseCellFragment(cellFragment({ ...config, number: 0 }))).toBeUndefined();
    expect(parseCellFragment(cellFragment({ ...config, code: 42 as unknown as string }))).toBeUndefined();
  });

  it("drops a theme or font size it does not know", () => {
    const odd = parseCellFragment(cellFragment({ ...config, theme: "neon" as "dark", fontSizePx: 500 }));
    expect(odd?.theme).toBeUndefined();
    expect(odd?.fontSizePx).toBeUndefined();
  });
});

describe("what a check says", () => {
  const failed = (ename: string, evalue: string, traceback = "") =>
    checkOutcome({ status: "error", error: { ename, evalue, traceback }, durationMs: 1 });

  it("Passed when it ran ok", () => {
    expect(checkOutcome({ status: "ok", durationMs: 1 })).toEqual({ passed: true, message: "Passed" });
  });

  it("the AssertionError's message, or a sentence when it has none", () => {
    expect(failed("AssertionError", "total should be 7")).toEqual({ passed: false, message: "total should be 7" });
    expect(failed("AssertionError", "")).toEqual({ passed: false, message: "The check failed." });
  });

  it("another error's last line", () => {
    const traceback = "Traceback (most recent call last):\n  File \"<exec>\", line 1, in <module>\nNameError: name 'y' is not defined\n";
    expect(failed("NameError", "name 'y' is not defined", traceback)).toEqual({ passed: false, message: "NameError: name 'y' is not defined" });
  });
});
