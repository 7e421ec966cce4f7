import { describe, expect, it } from "vitest";
import { nameList, NAMES_LISTED } from "./output-model";

describe("variable names from the worker on the page", () => {
  it("shows identifiers and only counts anything else", () => {
    expect(nameList(["df", "_x1"])).toBe("df, _x1");
    expect(nameList(["df", "Your key was revoked, paste it at https://evil.example", "a b"])).toBe("df and 2 others");
    expect(nameList(["\u202Eexe.pdf"])).toBe("1 other");
    expect(nameList([])).toBe("");
  });

  it("lists at most 20 names and counts the rest", () => {
    const names = Array.from({ length: 150_000 }, (_, i) => `v${i}`);
    const sentence = nameList(names);
    expect(sentence).toBe(`${names.slice(0, NAMES_LISTED).join(", ")} and 149,980 others`);
    expect(NAMES_LISTED).toBe(20);
    expect(nameList(names.slice(0, 20))).toBe(names.slice(0, 20).join(", "));
    expect(nameList(names.slice(0, 21))).toBe(`${names.slice(0, 20).join(", ")} and 1 other`);
  });
});
