import { describe, expect, it } from "vitest";
import { changeKind, clearCounts, editSource, insertCell, moveCell, removeCell, setCount } from "./edits";
import { newCell, type Notebook } from "./model";

function notebook(): Notebook {
  const code = { ...newCell("code", "print(1)"), id: "a", executionCount: 3, outputs: [{ kind: "stream" as const, name: "stdout" as const, text: "1\n" }], fileOutputs: [{ output_type: "x" }] };
  return { id: "n", title: "t", cells: [code, { ...newCell("markdown", "# Hi"), id: "b" }, { ...newCell("raw", "r"), id: "c" }], metadata: {}, createdAt: 1, updatedAt: 1 };
}
const ids = (nb: Notebook) => nb.cells.map((cell) => cell.id).join("");

describe("notebook edits", () => {
  it("change one cell and leave the notebook given untouched", () => {
    const before = notebook();
    const after = editSource(before, "b", "# Hello");
    expect(after.cells[1].source).toBe("# Hello");
    expect(before.cells[1].source).toBe("# Hi");
    expect(after.cells[0]).toBe(before.cells[0]);
  });

  it("return the same notebook when nothing changes, so that nothing is saved", () => {
    const nb = notebook();
    expect(editSource(nb, "b", "# Hi")).toBe(nb);
    expect(editSource(nb, "missing", "x")).toBe(nb);
    expect(moveCell(nb, "a", -1)).toBe(nb);
    expect(moveCell(nb, "c", 1)).toBe(nb);
    expect(removeCell(nb, "missing")).toBe(nb);
    expect(changeKind(nb, "b", "markdown")).toBe(nb);
    const cleared = clearCounts(nb);
    expect(clearCounts(cleared)).toBe(cleared);
  });

  it("insert after a cell, or at the end", () => {
    const nb = notebook();
    expect(ids(insertCell(nb, { ...newCell("code"), id: "x" }, "a"))).toBe("axbc");
    expect(ids(insertCell(nb, { ...newCell("code"), id: "x" }, null))).toBe("abcx");
    expect(ids(insertCell(nb, { ...newCell("code"), id: "x" }, "gone"))).toBe("abcx");
  });

  it("move and remove cells", () => {
    const nb = notebook();
    expect(ids(moveCell(nb, "a", 1))).toBe("bac");
    expect(ids(moveCell(nb, "c", -1))).toBe("acb");
    expect(ids(removeCell(nb, "b"))).toBe("ac");
  });

  it("a count drops the file's outputs; a new kind drops outputs and count; a restart clears counts", () => {
    const nb = notebook();
    const ran = setCount(nb, "a", 4).cells[0];
    expect(ran.executionCount).toBe(4);
    expect(ran.fileOutputs).toBeUndefined();
    expect(ran.outputs).toHaveLength(1);
    const text = changeKind(nb, "a", "markdown").cells[0];
    expect(text).toMatchObject({ kind: "markdown", source: "print(1)", executionCount: null, outputs: [], fileOutputs: undefined });
    expect(clearCounts(nb).cells.map((cell) => cell.executionCount)).toEqual([null, null, null]);
  });
});
