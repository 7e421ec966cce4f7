import { describe, expect, it } from "vitest";
import type { SentCuts, WorkerEvent } from "../../workers/python-api";
import { RUN_DISPLAY_CHARS, RUN_FILE_CHARS } from "../../workers/output-limits";
import { RunIntake } from "./run-intake";

function intake(limit = 10) {
  const passed: WorkerEvent[] = [];
  return { passed, intake: new RunIntake(limit, (event) => passed.push(event)) };
}

/** The most characters a run may send while its limit is `limit`. */
const allowed = (limit: number) => 2 * (limit + RUN_DISPLAY_CHARS) + (1 << 20);

describe("RunIntake", () => {
  it("passes stdout and stderr on as they come, cut to the run's limit, and says once that they were cut", () => {
    const { intake: run, passed } = intake(10);
    expect(run.take({ type: "streams", runs: [["stdout", "hello "], ["stderr", "oops"]] })).toBe(true);
    expect(run.take({ type: "streams", runs: [["stdout", "world"]] })).toBe(true);
    expect(run.take({ type: "streams", runs: [["stdout", "more"]] })).toBe(true);
    expect(run.take({ type: "truncated", limitBytes: 10 })).toBe(true);
    expect(passed).toEqual([
      { type: "stream", name: "stdout", text: "hello " },
      { type: "stream", name: "stderr", text: "oops" },
      { type: "truncated", limitBytes: 10 },
    ]);
  });

  it("passes displays, prompts and progress on unchanged", () => {
    const { intake: run, passed } = intake();
    const events: Parameters<RunIntake["take"]>[0][] = [
      { type: "display", data: { "text/plain": "1" } },
      { type: "input-request", prompt: "Name? " },
      { type: "progress", message: "Loading micropip" },
      { type: "clear-output" },
    ];
    for (const event of events) expect(run.take(event)).toBe(true);
    expect(passed).toEqual(events);
  });

  it("calls more display text than the limits keep, twice over, a flood, and passes nothing of the display that made it one", () => {
    const { intake: run, passed } = intake(10);
    const half = "x".repeat(Math.ceil(allowed(10) / 2));
    expect(run.take({ type: "display", data: { "text/plain": half } })).toBe(true);
    expect(run.take({ type: "display", data: { "text/plain": half } })).toBe(false);
    expect(passed).toHaveLength(1);
  });

  it("counts files sent as bytes, not those sent as Blobs", () => {
    const { intake: run } = intake();
    const file = new Uint8Array(RUN_FILE_CHARS);
    const cut: SentCuts = { "image/png": { chars: RUN_FILE_CHARS, file } };
    const blob: SentCuts = { "image/png": { chars: RUN_FILE_CHARS, file: new Blob(["x"]) } };
    for (let i = 0; i < 4; i++) expect(run.take({ type: "display", data: {}, cut: blob })).toBe(true);
    expect(run.take({ type: "display", data: {}, cut })).toBe(true);
    expect(run.take({ type: "display", data: {}, cut })).toBe(true);
    expect(run.take({ type: "display", data: {}, cut })).toBe(false);
  });
});
