import { useEffect, useState } from "react";

/**
 * Work that outputs cost the page's thread (sanitizing HTML, rendering Markdown), spread over
 * frames: each frame takes jobs in order until they add up to this many characters (a larger
 * job has a frame of its own). A conversation or Playground opened with many outputs would
 * otherwise render them all in one task.
 */
export const FRAME_BUDGET_CHARS = 64 * 1024;

interface Job {
  cost: number;
  run: () => void;
  cancelled: boolean;
}

const queue: Job[] = [];
let scheduled = false;

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  const drain = () => {
    scheduled = false;
    runSome();
  };
  // After the next frame is drawn, so that what the last jobs showed is laid out in that frame, apart from the next ones'.
  if (typeof requestAnimationFrame === "function" && typeof document !== "undefined" && document.visibilityState === "visible") {
    requestAnimationFrame(() => setTimeout(drain, 0));
  } else {
    setTimeout(drain, 16);
  }
}

function runSome(): void {
  let used = 0;
  while (queue.length) {
    const next = queue[0];
    if (!next.cancelled && used > 0 && used + next.cost > FRAME_BUDGET_CHARS) break;
    queue.shift();
    if (next.cancelled) continue;
    used += next.cost;
    next.run();
  }
  if (queue.length) schedule();
}

/** Run `job` in a later frame, in turn with the others; returns its cancel. */
export function spread(cost: number, job: () => void): () => void {
  const entry: Job = { cost, run: job, cancelled: false };
  queue.push(entry);
  schedule();
  return () => {
    entry.cancelled = true;
  };
}

/** `compute()` for `input`, done in its turn (see {@link spread}); undefined until then, and for no input. */
export function useSpreadWork<I, T>(input: I | undefined, compute: (input: I) => T, cost: (input: I) => number): T | undefined {
  const [done, setDone] = useState<{ input: I; value: T }>();
  useEffect(() => (input === undefined ? undefined : spread(cost(input), () => setDone({ input, value: compute(input) }))), [input, compute, cost]);
  return input !== undefined && done?.input === input ? done.value : undefined;
}
