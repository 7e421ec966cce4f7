import { describe, expect, it, vi } from "vitest";
import { RunOwner } from "./run-owner";

describe("RunOwner", () => {
  it("shows what the run printed, then how it ended, and counts it", async () => {
    const owner = new RunOwner();
    const finished = await owner.run(async (_signal, onEvent) => {
      onEvent({ type: "stream", name: "stdout", text: "hello\n" });
      return { status: "ok", value: { "text/plain": "42" }, durationMs: 5 };
    });
    expect(finished.outcome.status).toBe("ok");
    expect(owner.current).toMatchObject({ running: false, finishedRuns: 1 });
    expect(owner.current.outputs).toEqual([
      { kind: "stream", name: "stdout", text: "hello\n" },
      { kind: "value", data: { "text/plain": "42" } },
    ]);
  });

  it("a run that fails outside Python ends with its reason shown, not an empty output", async () => {
    const owner = new RunOwner();
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const finished = await owner.run(async () => {
      throw new Error("the worker went away");
    });
    logged.mockRestore();
    expect(finished.outcome).toMatchObject({ status: "crashed", error: { evalue: "the worker went away" } });
    expect(owner.current).toMatchObject({ running: false, finishedRuns: 1 });
    expect(owner.current.outputs).toContainEqual({ kind: "notice", tone: "warning", text: "Python crashed: the worker went away." });
    // The next run starts as usual.
    await owner.run(async () => ({ status: "ok", durationMs: 1 }));
    expect(owner.current.finishedRuns).toBe(2);
  });
});
