import { describe, expect, it } from "vitest";
import { safeRelativePath } from "./file-paths";

describe("safeRelativePath", () => {
  it("keeps ordinary names, spaces and Unicode", () => {
    expect(safeRelativePath("data.csv")).toBe("data.csv");
    expect(safeRelativePath("my results 2026.csv")).toBe("my results 2026.csv");
    expect(safeRelativePath("données/été ☀.txt")).toBe("données/été ☀.txt");
  });

  it("never leaves the working directory", () => {
    expect(safeRelativePath("../x")).toBe("x");
    expect(safeRelativePath("../../etc/passwd")).toBe("etc/passwd");
    expect(safeRelativePath("/etc/passwd")).toBe("etc/passwd");
    expect(safeRelativePath("a/./b/../c")).toBe("a/b/c");
    expect(safeRelativePath("C:\\Users\\me\\x.csv")).toBe("C:/Users/me/x.csv");
  });

  it("drops control characters and reports names with nothing left", () => {
    expect(safeRelativePath("a\u0000b\n.txt")).toBe("ab.txt");
    expect(safeRelativePath("..")).toBe("");
    expect(safeRelativePath("/")).toBe("");
  });
});
