import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { dropKept, onRefusedSaves, refusedSaves, saveKept } from "./kept-saves";

const full = () => new DOMException("The quota has been exceeded.", "QuotaExceededError");

/** A store that refuses every write while `full` is set, and keeps what it was given. */
function store() {
  const written: string[] = [];
  const state = { full: true };
  const write = (value: string) => async () => {
    if (state.full) throw full();
    written.push(value);
  };
  return { written, state, write };
}

describe("saveKept", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.spyOn(console, "error").mockImplementation(() => undefined);
  });
  afterEach(async () => {
    dropKept("c1");
    dropKept("c2");
    await vi.runAllTimersAsync();
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("says what a refused write would lose, tries it again until storage takes it, then says nothing", async () => {
    const { written, state, write } = store();
    const told = vi.fn();
    const stop = onRefusedSaves(told);
    expect(await saveKept("c1:draft", "your draft", write("hello"))).toBe(false);
    expect(refusedSaves()).toEqual({ whats: ["your draft"], why: "QuotaExceededError: The quota has been exceeded" });
    expect(told).toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(written).toEqual([]);
    state.full = false;
    await vi.advanceTimersByTimeAsync(5000);
    expect(written).toEqual(["hello"]);
    expect(refusedSaves().whats).toEqual([]);
    stop();
  });

  it("a newer write of the same part replaces the refused one, which is never written after it", async () => {
    const { written, state, write } = store();
    await saveKept("c1:draft", "your draft", write("old"));
    state.full = false;
    expect(await saveKept("c1:draft", "your draft", write("new"))).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(written).toEqual(["new"]);
    expect(refusedSaves().whats).toEqual([]);
  });

  it("once storage takes a write, the other refused ones are tried at once, each once", async () => {
    const { written, state, write } = store();
    await saveKept("c1:message:a", "an answer", write("a"));
    await saveKept("c1:message:b", "an answer", write("b"));
    await saveKept("c2:record", "a conversation's name and settings", write("name"));
    expect(refusedSaves().whats).toEqual(["an answer", "a conversation's name and settings"]);
    state.full = false;
    await saveKept("c1:draft", "your draft", write("draft"));
    await vi.advanceTimersByTimeAsync(0);
    expect(written.sort()).toEqual(["a", "b", "draft", "name"]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(written).toHaveLength(4);
  });

  it("a deleted conversation's refused writes are not tried again; another's are", async () => {
    const { written, state, write } = store();
    await saveKept("c1:message:a", "an answer", write("deleted"));
    await saveKept("c2:draft", "your draft", write("kept"));
    dropKept("c1");
    expect(refusedSaves().whats).toEqual(["your draft"]);
    state.full = false;
    await vi.advanceTimersByTimeAsync(5000);
    expect(written).toEqual(["kept"]);
  });
});
