import { describe, expect, it } from "vitest";
import { capError, capPrompt, ERROR_VALUE_CHARS, keepEnds, keepStart, PROMPT_CHARS, TRACEBACK_CHARS } from "./text-limits";

describe("errors and prompts that Python makes as long as it likes", () => {
  it("keep an error's start, its traceback's start and end, and say how much was cut", () => {
    const huge = "x\n".repeat(3_000_000);
    const error = capError({ ename: "ValueError", evalue: huge, traceback: `Traceback (most recent call last):\n${huge}ValueError: the end` });
    expect(error.ename).toBe("ValueError");
    expect(error.evalue.length).toBeLessThan(ERROR_VALUE_CHARS + 100);
    expect(error.evalue).toMatch(/^x\nx\n/);
    expect(error.evalue).toMatch(/… \[5,990,000 more characters not kept\]$/);
    expect(error.traceback.length).toBeLessThan(TRACEBACK_CHARS + 100);
    expect(error.traceback.startsWith("Traceback (most recent call last):\n")).toBe(true);
    expect(error.traceback).toMatch(/… \[[\d,]+ characters not kept\] …/);
    expect(error.traceback.endsWith("ValueError: the end")).toBe(true);
  });

  it("keep a prompt's start", () => {
    const prompt = capPrompt("p\n".repeat(3_000_000));
    expect(prompt.length).toBeLessThan(PROMPT_CHARS + 100);
    expect(prompt.startsWith("p\np\n")).toBe(true);
    expect(capPrompt("Your name? ")).toBe("Your name? ");
  });

  it("leave text within the limit as it is", () => {
    expect(keepStart("short", 10)).toBe("short");
    expect(keepEnds("short", 10)).toBe("short");
    expect(capError({ ename: "E", evalue: "v", traceback: "t" })).toEqual({ ename: "E", evalue: "v", traceback: "t" });
  });
});

describe("a text cut once", () => {
  it("is not cut again where it is received or read back", () => {
    const once = capError({ ename: "E", evalue: "v".repeat(10**6), traceback: "t".repeat(10**6) });
    expect(capError(once)).toEqual(once);
    const prompt = capPrompt("p".repeat(10**6));
    expect(capPrompt(prompt)).toBe(prompt);
  });
});
