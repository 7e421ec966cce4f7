/**
 * Whether a host frame is still there. In Chromium a host frame is an out-of-process frame, and
 * its process can die under its workers: hostile Python can fill a worker's JavaScript heap
 * through `js` (V8 then ends the whole process), and a crash does the same. The page gets no
 * event for it, and every answer it waits for from the frame or its workers would never come:
 * a run would read "Running…" for ever, a Stop would never be answered. So the page asks each
 * frame, and a frame that has answered before and then stops answering is gone.
 */

/** How often a frame is asked. */
export const FRAME_PING_MS = 1000;
/**
 * How long a frame that has answered before may leave the page's questions unanswered. Its
 * thread only relays (Python runs in the workers), so it answers within milliseconds even on a
 * machine whose cores are all busy. A tick of the page's own timer that came late (the page was
 * held up: a busy machine, a throttled background tab) counts as {@link FRAME_PING_MS} twice at
 * most, so a page held up for a while does not give up a frame it could not hear.
 */
export const FRAME_SILENCE_MS = 4000;

export interface FrameWatch {
  /** The frame answered. */
  heard(): void;
  /** The frame went away on purpose: no more questions. */
  stop(): void;
}

/**
 * Calls `ask()` every {@link FRAME_PING_MS}, and `lost()` once, when the frame has left
 * {@link FRAME_SILENCE_MS} of questions unanswered since it last answered. A frame that has
 * never answered is not judged here: its start has a deadline of its own. An idle frame is asked
 * too (a message a second): one that died is then not handed the next worker.
 */
export function watchFrame(ask: () => void, lost: () => void): FrameWatch {
  let answeredOnce = false;
  let asked = false;
  let silence = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    // A tick that came late counts as at most two: the page itself was held up.
    const elapsed = Math.min(now - last, 2 * FRAME_PING_MS);
    last = now;
    if (asked && answeredOnce) silence += elapsed;
    if (silence >= FRAME_SILENCE_MS) {
      clearInterval(timer);
      lost();
      return;
    }
    asked = true;
    ask();
  }, FRAME_PING_MS);
  return {
    heard: () => {
      answeredOnce = true;
      asked = false;
      silence = 0;
    },
    stop: () => clearInterval(timer),
  };
}
