import { describe, expect, it } from "vitest";
import type { StateCapture } from "../../workers/python-api";
import { bounded, MAX_SAVED_VARIABLES } from "../model/session-snapshot";
import { emptySnapshot, merged } from "./session-state";

const capture = (change: Partial<StateCapture>): StateCapture => ({ removed: [], values: {}, modules: {}, dropped: [], tooLarge: [], counter: 1, ...change });
const bytes = () => new Uint8Array([1]);
const named = (count: number, prefix = "v") => Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(6, "0")}`);

describe("the saved state's limit of variables", () => {
  it("keeps the first 5,000 of a run's variables and counts the rest", () => {
    const names = named(150_000);
    const next = merged(emptySnapshot(), capture({ names, values: Object.fromEntries(names.map((name) => [name, bytes()])) }));
    expect(MAX_SAVED_VARIABLES).toBe(5_000);
    expect(next.names).toEqual(names.slice(0, 5_000));
    expect(Object.keys(next.values)).toHaveLength(5_000);
    expect(next.notKept).toBe(145_000);
  });

  it("keeps the variables kept before, and counts new ones past the limit", () => {
    const first = named(5_000);
    const before = merged(emptySnapshot(), capture({ names: first, values: Object.fromEntries(first.map((name) => [name, bytes()])) }));
    expect(before.notKept).toBeUndefined();
    const later = merged(before, capture({ values: { a: bytes(), b: bytes() }, removed: ["v000000"] }));
    expect(later.names).toHaveLength(5_000);
    expect(later.names).toContain("a");
    expect(later.names).not.toContain("b");
    expect(later.values.b).toBeUndefined();
    expect(later.notKept).toBe(1);
    // A full list again: what was kept stays kept.
    const listed = merged(later, capture({ names: [...first.slice(1), "a", "b", "c"].sort() }));
    expect(listed.names).toHaveLength(5_000);
    expect(listed.names).toContain("a");
    expect(listed.notKept).toBe(2);
  });

  it("bounds a state saved before the limit as it is read", () => {
    const names = named(6_000);
    const old = { ...emptySnapshot(), names, values: Object.fromEntries(names.map((name) => [name, bytes()])), modules: { [names[5_999]]: "math" } };
    const read = bounded(old);
    expect(read.names).toEqual(names.slice(0, 5_000));
    expect(Object.keys(read.values)).toHaveLength(5_000);
    expect(read.modules).toEqual({});
    expect(read.notKept).toBe(1_000);
  });
});
