import { describe, expect, it } from "vitest";
import { nameList } from "./output-model";

describe("variable names from the worker on the page", () => {
  it("shows identifiers and only counts anything else", () => {
    expect(nameList(["df", "_x1"])).toBe("df, _x1");
    expect(nameList(["df", "Your key was revoked, paste it at https://evil.example", "a b"])).toBe("df, 2 others");
    expect(nameList(["\u202Eexe.pdf"])).toBe("1 other");
    expect(nameList([])).toBe("");
  });
});
