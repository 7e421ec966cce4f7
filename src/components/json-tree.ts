/**
 * JSON from Python (`application/json`) as a tree that folds, bounded so that a huge value
 * neither takes long to read nor makes thousands of elements.
 */

/** JSON text longer than this is shown as its text, not parsed. */
export const JSON_TREE_CHARS = 100_000;
/** The most entries (values, objects and arrays) a tree shows in all; the rest are counted. */
export const JSON_TREE_NODES = 2_000;
/** The most entries an object or array shows; the rest are counted. */
export const JSON_TREE_ENTRIES = 200;
/** Objects and arrays nested deeper than this are shown folded into one line of their size. */
export const JSON_TREE_DEPTH = 20;
/** A string or number longer than this is cut, with an ellipsis. */
export const JSON_TREE_TEXT = 1_000;

export type JsonNode =
  | { key?: string; kind: "value"; text: string }
  /** `size`: its number of entries; `more`: those not shown; `children` absent past the depth limit. */
  | { key?: string; kind: "object" | "array"; size: number; children?: JsonNode[]; more: number };

/** The tree of `text`, or undefined when it is too long or not JSON. */
export function jsonTree(text: string): JsonNode | undefined {
  if (text.length > JSON_TREE_CHARS) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  let budget = JSON_TREE_NODES;
  const build = (item: unknown, depth: number, key?: string): JsonNode => {
    budget--;
    const named = key === undefined ? {} : { key: cut(key) };
    if (item === null || typeof item !== "object") {
      return { ...named, kind: "value", text: cut(JSON.stringify(item) ?? String(item)) };
    }
    const entries: [string, unknown][] = Array.isArray(item) ? item.map((entry, index) => [String(index), entry]) : Object.entries(item);
    const kind = Array.isArray(item) ? "array" : "object";
    if (depth >= JSON_TREE_DEPTH) return { ...named, kind, size: entries.length, more: entries.length };
    const children: JsonNode[] = [];
    for (const [name, entry] of entries) {
      if (children.length >= JSON_TREE_ENTRIES || budget <= 0) break;
      children.push(build(entry, depth + 1, name));
    }
    return { ...named, kind, size: entries.length, children, more: entries.length - children.length };
  };
  return build(value, 0);
}

function cut(text: string): string {
  return text.length > JSON_TREE_TEXT ? `${text.slice(0, JSON_TREE_TEXT)}…` : text;
}
