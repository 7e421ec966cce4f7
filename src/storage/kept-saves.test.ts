import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { dropKept, keptValue, leaveKept, onRefusedSaves, refusedSaves, saveKept } from "./kept-saves";

const quota = () => new DOMException("The quota has been exceeded.", "QuotaExceededError");

/** A store that refuses writes larger than `room`, and keeps what it was given (key → value). */
function store(room = 0) {
  const state = { room, attempts: 0 };
  const written = new Map<string, string>();
  const write = (key: string) => async (value: string) => {
    state.attempts += 1;
    if (value.length > state.room) throw quota();
    written.set(key, value);
  };
  const save = (key: string, value: string, what = "an answer") => saveKept(key, what, value, write(key));
  return { state, written, save };
}

const whats = () => refusedSaves().map((save) => save.what);
let conversation = 0;

describe("saveKept", () => {
  let c: string;
  beforeEach(() => {
    vi.useFakeTimers();
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    c = `c${++conversation}`;
  });
  afterEach(async () => {
    for (const save of refusedSaves()) dropKept(save.key.split(":")[0]);
    await vi.runAllTimersAsync();
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("says what a refused write would lose, keeps its value, tries it again until storage takes it, then says nothing", async () => {
    const { state, written, save } = store();
    const told = vi.fn();
    const stop = onRefusedSaves(told);
    expect(await save(`${c}:draft`, "hello", "your draft")).toBe(false);
    expect(whats()).toEqual(["your draft"]);
    expect(refusedSaves()[0].why).toBe("QuotaExceededError: The quota has been exceeded");
    expect(keptValue(`${c}:draft`)).toBe("hello");
    expect(told).toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(written.size).toBe(0);
    state.room = 100;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(written.get(`${c}:draft`)).toBe("hello");
    expect(whats()).toEqual([]);
    expect(keptValue(`${c}:draft`)).toBeUndefined();
    stop();
  });

  it("a newer write of a part replaces the refused one, which stays listed (no flicker) until the newer one is written", async () => {
    const { state, written, save } = store();
    await save(`${c}:draft`, "old");
    const told = vi.fn();
    const stop = onRefusedSaves(told);
    state.room = 3;
    const newer = save(`${c}:draft`, "new");
    expect(whats()).toEqual(["an answer"]);
    expect(keptValue(`${c}:draft`)).toBe("new");
    expect(told).not.toHaveBeenCalled();
    expect(await newer).toBe(true);
    expect(whats()).toEqual([]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect([...written.values()]).toEqual(["new"]);
    stop();
  });

  it("an older write that storage refuses after a newer one was written is not kept", async () => {
    let refuseOld: (error: unknown) => void = () => undefined;
    const old = saveKept(`${c}:record`, "its name and settings", "old", () => new Promise<void>((_, reject) => (refuseOld = reject)));
    expect(await saveKept(`${c}:record`, "its name and settings", "new", async () => undefined)).toBe(true);
    refuseOld(quota());
    expect(await old).toBe(false);
    expect(whats()).toEqual([]);
  });

  it("a small write that fits does not have a large refused one tried again each time: it waits longer after each refusal", async () => {
    const { state, save } = store(10);
    await save(`${c}:variables`, "x".repeat(1000), "its Python variables");
    state.attempts = 0;
    // An answer streamed for two minutes, saved every 250 ms.
    for (let i = 0; i < 480; i++) {
      await save(`${c}:message:m`, `part ${i % 10}`);
      await vi.advanceTimersByTimeAsync(250);
    }
    const largeTries = state.attempts - 480;
    // Waits of 4, 8, 16, 32 and then 60 s: seven tries in two minutes, not 480.
    expect(largeTries).toBeGreaterThanOrEqual(4);
    expect(largeTries).toBeLessThanOrEqual(8);
    expect(whats()).toEqual(["its Python variables"]);
  });

  it("once a refused write is taken, the others are tried at once, each once", async () => {
    const { state, written, save } = store();
    await save(`${c}:message:a`, "a");
    await save(`${c}:message:b`, "b");
    await save(`${c}:record`, "name", "its name and settings");
    expect(whats()).toEqual(["an answer", "an answer", "its name and settings"]);
    state.room = 100;
    await vi.advanceTimersByTimeAsync(4000);
    expect([...written.values()].sort()).toEqual(["a", "b", "name"]);
    expect(state.attempts).toBe(6);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(state.attempts).toBe(6);
  });

  it("a deleted conversation's refused writes are not tried again, nor any later write of it; another's are", async () => {
    const { state, written, save } = store();
    await save(`${c}:message:a`, "deleted");
    await save(`${c}x:draft`, "kept", "your draft");
    dropKept(c);
    expect(whats()).toEqual(["your draft"]);
    state.room = 100;
    expect(await save(`${c}:message:b`, "after the delete")).toBe(false);
    await vi.advanceTimersByTimeAsync(5000);
    expect([...written.values()]).toEqual(["kept"]);
  });

  it("a retry under way when its conversation is deleted is not kept if refused", async () => {
    let refuse: (error: unknown) => void = () => undefined;
    let tries = 0;
    const write = () => {
      tries += 1;
      return tries === 1 ? Promise.reject(quota()) : new Promise<void>((_, reject) => (refuse = reject));
    };
    await saveKept(`${c}:variables`, "its Python variables", "v", write);
    await vi.advanceTimersByTimeAsync(4000);
    expect(tries).toBe(2);
    dropKept(c);
    refuse(quota());
    await vi.advanceTimersByTimeAsync(60_000);
    expect(tries).toBe(2);
    expect(whats()).toEqual([]);
  });

  it("while another tab continues the conversation, its variables are not written from here, refused or new; answers still are", async () => {
    const { state, written, save } = store();
    await save(`${c}:message:a`, "answer");
    await save(`${c}:variables`, "old variables", "this conversation's Python variables");
    leaveKept(c, ["variables"], false);
    expect(whats()).toEqual(["an answer"]);
    state.room = 100;
    expect(await save(`${c}:variables`, "late variables")).toBe(false);
    await vi.advanceTimersByTimeAsync(5000);
    expect([...written]).toEqual([[`${c}:message:a`, "answer"]]);
    // Continued here again: written as before.
    leaveKept(c, ["variables"], true);
    expect(await save(`${c}:variables`, "new variables")).toBe(true);
  });

  it("no timer runs while a retry is being written, however long it takes", async () => {
    let tries = 0;
    const write = () => {
      tries += 1;
      return tries === 1 ? Promise.reject(quota()) : new Promise<void>(() => undefined);
    };
    await saveKept(`${c}:variables`, "this conversation's Python variables", "v", write);
    await vi.advanceTimersByTimeAsync(4000);
    expect(tries).toBe(2);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(tries).toBe(2);
  });
});
