import { describe, expect, it } from "vitest";
import { JSON_TREE_CHARS, JSON_TREE_DEPTH, JSON_TREE_ENTRIES, JSON_TREE_NODES, JSON_TREE_TEXT, jsonTree, type JsonNode } from "./json-tree";

/** Every node of a tree. */
function count(node: JsonNode): number {
  return 1 + (node.kind === "value" ? 0 : (node.children ?? []).reduce((sum, child) => sum + count(child), 0));
}

describe("jsonTree", () => {
  it("gives keys, sizes and values", () => {
    expect(jsonTree('{"a": [1, "x"], "b": null}')).toEqual({
      kind: "object",
      size: 2,
      more: 0,
      children: [
        { key: "a", kind: "array", size: 2, more: 0, children: [{ key: "0", kind: "value", text: "1" }, { key: "1", kind: "value", text: '"x"' }] },
        { key: "b", kind: "value", text: "null" },
      ],
    });
  });

  it("shows at most so many entries of a container, and counts the rest", () => {
    const tree = jsonTree(JSON.stringify(Array.from({ length: 5000 }, (_, i) => i)));
    expect(tree).toMatchObject({ kind: "array", size: 5000, more: 5000 - JSON_TREE_ENTRIES });
    expect(tree?.kind !== "value" && tree?.children).toHaveLength(JSON_TREE_ENTRIES);
  });

  it("shows at most so many entries in all, however they nest", () => {
    const wide = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`k${i}`, Array.from({ length: 150 }, (_, j) => j)]));
    const tree = jsonTree(JSON.stringify(wide))!;
    expect(count(tree)).toBeLessThanOrEqual(JSON_TREE_NODES + 1);
    expect(count(tree)).toBeGreaterThan(JSON_TREE_NODES - 200);
  });

  it("folds what is nested too deep into its size", () => {
    const deep = "[".repeat(500) + "]".repeat(500);
    let node = jsonTree(deep)!;
    let depth = 0;
    while (node.kind !== "value" && node.children?.length) {
      node = node.children[0];
      depth++;
    }
    expect(depth).toBe(JSON_TREE_DEPTH);
    expect(node).toMatchObject({ kind: "array", size: 1, more: 1 });
    expect(node.kind !== "value" && node.children).toBeUndefined();
  });

  it("cuts long strings, and leaves too long or broken JSON to be shown as text", () => {
    const tree = jsonTree(JSON.stringify({ s: "y".repeat(5000) }))!;
    expect(tree.kind !== "value" && tree.children?.[0]).toEqual({ key: "s", kind: "value", text: `"${"y".repeat(JSON_TREE_TEXT - 1)}…` });
    expect(jsonTree(`[${"1,".repeat(JSON_TREE_CHARS / 2)}1]`)).toBeUndefined();
    expect(jsonTree("{not json")).toBeUndefined();
  });
});
