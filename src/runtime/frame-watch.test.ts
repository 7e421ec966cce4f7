import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FRAME_PING_MS, FRAME_SILENCE_MS, watchFrame } from "./frame-watch";

/** A frame that answers each question at once while `alive`. */
function frame() {
  const state = { alive: true, asked: 0 };
  const lost = vi.fn();
  const watch = watchFrame(
    () => {
      state.asked += 1;
      if (state.alive) queueMicrotask(() => watch.heard());
    },
    lost,
  );
  return { state, lost, watch };
}

describe("watchFrame", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "performance", "queueMicrotask"] }));
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it("never gives up a frame that answers", async () => {
    const { lost, state, watch } = frame();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(state.asked).toBe(60);
    expect(lost).not.toHaveBeenCalled();
    watch.stop();
  });

  it("gives up a frame that stops answering, within five seconds", async () => {
    const { lost, state } = frame();
    await vi.advanceTimersByTimeAsync(10_000);
    state.alive = false;
    await vi.advanceTimersByTimeAsync(FRAME_SILENCE_MS - FRAME_PING_MS);
    expect(lost).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(2 * FRAME_PING_MS);
    expect(lost).toHaveBeenCalledTimes(1);
    // And asks no more.
    const asked = state.asked;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(state.asked).toBe(asked);
    expect(lost).toHaveBeenCalledTimes(1);
  });

  it("does not judge a frame that has never answered (its start has its own deadline)", async () => {
    const lost = vi.fn();
    const watch = watchFrame(() => undefined, lost);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(lost).not.toHaveBeenCalled();
    watch.stop();
  });

  it("keeps a frame whose answers the page, held up, reads only after its next late tick", async () => {
    const lost = vi.fn();
    const question = { pending: false };
    const watch = watchFrame(() => (question.pending = true), lost);
    await vi.advanceTimersByTimeAsync(FRAME_PING_MS);
    question.pending = false;
    watch.heard();
    // From now on the page's timer fires a minute late each time, and runs before the page reads
    // the answer to the question it asked the tick before.
    let clock = performance.now();
    vi.spyOn(performance, "now").mockImplementation(() => clock);
    for (let tick = 0; tick < 20; tick++) {
      const answered = question.pending;
      question.pending = false;
      clock += 60_000;
      await vi.advanceTimersByTimeAsync(FRAME_PING_MS);
      if (answered) watch.heard();
    }
    expect(lost).not.toHaveBeenCalled();
    watch.stop();
  });

  it("counts a late tick of the page's own timer as two questions' time at most", async () => {
    const { lost, state, watch } = frame();
    await vi.advanceTimersByTimeAsync(3 * FRAME_PING_MS);
    state.alive = false;
    // From now on the page's timer fires a minute late each time (a held-up page, a throttled tab).
    let clock = performance.now();
    vi.spyOn(performance, "now").mockImplementation(() => clock);
    const lateTick = async () => {
      clock += 60_000;
      await vi.advanceTimersByTimeAsync(FRAME_PING_MS);
    };
    await lateTick(); // asks, unanswered
    await lateTick(); // two seconds of silence
    expect(lost).not.toHaveBeenCalled();
    await lateTick(); // four
    expect(lost).toHaveBeenCalledTimes(1);
    watch.stop();
  });
});
