// Figures taken through the runtime API on the harness page (window.kiln): the 1+1 round
// trip with and without state, interrupts, recovery after a deadline, Restart with a warm
// spare, a new worker's start-up, and long tasks while a spare loads.
import { TRIALS, longestTask, median, onNewDocument, openPage, percentile, recordPage, spread, waitFor } from "./lib.mjs";

/** A harness page with `window.session` ready (no deadline) and its spare loaded. */
export async function harnessPage(browser, origin) {
  const { page, context } = await openPage(browser);
  await onNewDocument(page, recordPage);
  await page.goto(`${origin}/harness.html`);
  await freshSession(page);
  return { page, context };
}

/** Replaces `window.session` with a new PythonSession (taking the spare) and waits for it and the next spare. */
function freshSession(page) {
  return page.evaluate(async () => {
    window.session?.dispose();
    window.session = new window.kiln.PythonSession({ ...window.kiln.defaultConfig, timeoutMs: 0 });
    await window.session.ready;
    await window.kiln.sparesReady();
  });
}

export const bootCounts = (page) => page.evaluate(() => window.kiln?.bootCounts?.() ?? null);

/**
 * `1+1` through session.run: 10 runs to warm up, then up to 300 timed ones or 20 s,
 * whichever comes first (at least 5).
 */
async function roundTrip(page) {
  const times = await page.evaluate(async () => {
    const once = async () => {
      const start = performance.now();
      const result = await window.session.run("1+1");
      const ms = performance.now() - start;
      if (result.value?.["text/plain"] !== "2") throw new Error(`1+1 gave ${JSON.stringify(result)}`);
      return ms;
    };
    const warmEnd = performance.now() + 10_000;
    for (let i = 0; i < 10 && performance.now() < warmEnd; i++) await once();
    const times = [];
    const end = performance.now() + 20_000;
    while (times.length < 300 && (times.length < 5 || performance.now() < end)) times.push(await once());
    return times;
  });
  return { p50: percentile(times, 50), p95: percentile(times, 95), runs: times.length };
}

/** States held by the session while 1+1 is timed: the code that makes it, a check, and its answer. */
export const STATES = {
  empty: { label: "empty namespace", setup: "", check: "1+1", expect: "2" },
  bytes50: { label: "50 MiB bytes", setup: "import random\nstate = random.randbytes(50 << 20)", check: "len(state), state[-1] == state[(50 << 20) - 1]", expect: "(52428800, True)" },
  bytearray500: { label: "500 MiB bytearray", setup: "import random\nstate = bytearray(random.randbytes(1 << 20)) * 500", check: "len(state)", expect: "524288000" },
  objects: { label: "10^5 small objects", setup: "state = {i: [i, str(i)] for i in range(10**5)}", check: "len(state), state[99999]", expect: "(100000, [99999, '99999'])" },
};

/** The round trip with each state in a session of its own; the state is checked before and after. */
export async function roundTrips(page, kinds) {
  const results = {};
  for (const kind of kinds) {
    // One state failing (say, out of memory) leaves the others measured.
    try {
      const { setup, check, expect } = STATES[kind];
      await freshSession(page);
      const setupMs = await page.evaluate(
        async ({ setup, check, expect }) => {
          const start = performance.now();
          if (setup) {
            const made = await window.session.run(setup);
            if (made.status !== "ok") throw new Error(`making the state failed: ${JSON.stringify(made.error ?? made)}`);
          }
          const ms = performance.now() - start;
          const seen = await window.session.run(check);
          if (seen.value?.["text/plain"] !== expect) throw new Error(`state check: expected ${expect}, got ${JSON.stringify(seen.value ?? seen.error)}`);
          await window.kiln.sparesReady();
          return ms;
        },
        { setup, check, expect },
      );
      const figures = await roundTrip(page);
      const after = await page.evaluate((check) => window.session.run(check).then((r) => r.value?.["text/plain"]), check);
      if (after !== expect) throw new Error(`the ${kind} state was gone after the round trips: ${after}`);
      results[kind] = { ...figures, setupMs };
    } catch (error) {
      results[kind] = { error: error instanceof Error ? error.message.split("\n")[0] : String(error) };
    }
  }
  await freshSession(page);
  return results;
}

/**
 * SIGINT to KeyboardInterrupt; trials where Python had to be replaced (a hard stop) are counted
 * apart, with how long each took: the recovery plus 30 ms of Python not seeing the Stop, or plus
 * 3 s of Python having seen it and not stopping.
 */
export async function interruptLatency(page, code) {
  const times = [];
  const hardStopMs = [];
  for (let i = 0; i < TRIALS + 2; i++) {
    const trial = await page.evaluate(async (code) => {
      await window.kiln.sparesReady();
      const running = window.session.run(code);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const stop = performance.now();
      window.session.interrupt();
      const result = await running;
      if (result.status !== "interrupted") throw new Error(`expected interrupted, got ${result.status}`);
      return { ms: performance.now() - stop, hardStop: Boolean(result.restored) };
    }, code);
    (trial.hardStop ? hardStopMs : times).push(trial.ms);
  }
  return { ms: median(times), hardStops: hardStopMs.length, hardStopMs, trials: TRIALS + 2 };
}

const DEADLINE_MS = 500;
const STATE = "number, text, items = 42, 'x', [1, 2, 3]\nmapping = {'k': (1, 2)}\nclass Point:\n    def __init__(self, x): self.x = x\npoint = Point(3)";

/** From the deadline of a run stuck in C to the next run's result, state restored; against terminate + new bare worker + a run. */
export async function recovery(page) {
  const kiln = [];
  for (let i = 0; i < TRIALS; i++) {
    kiln.push(
      await page.evaluate(
        async ({ deadline, state }) => {
          await window.session.run(state);
          await window.kiln.sparesReady();
          const start = performance.now();
          const hung = await window.session.run("sum(range(10**13))", { timeoutMs: deadline });
          const next = await window.session.run("(number, text, items, mapping, point.x)");
          const ms = performance.now() - start - deadline;
          if (hung.status !== "timeout" || hung.restored?.lost.length) throw new Error(`bad recovery: ${JSON.stringify(hung)}`);
          if (next.value?.["text/plain"] !== "(42, 'x', [1, 2, 3], {'k': (1, 2)}, 3)") throw new Error("state not restored");
          return ms;
        },
        { deadline: DEADLINE_MS, state: STATE },
      ),
    );
  }
  const baseline = [];
  for (let i = 0; i < TRIALS; i++) {
    baseline.push(
      await page.evaluate(async (deadline) => {
        const answer = (worker) => new Promise((resolve) => (worker.onmessage = (e) => resolve(e.data)));
        const { worker: stuck } = await window.kiln.bareWorker();
        stuck.postMessage("sum(range(10**13))");
        await new Promise((resolve) => setTimeout(resolve, deadline));
        const start = performance.now();
        stuck.terminate();
        const { worker } = await window.kiln.bareWorker();
        worker.postMessage("1");
        const reply = await answer(worker);
        worker.terminate();
        if (reply.value !== "1") throw new Error(`the new bare worker answered ${JSON.stringify(reply)}`);
        return performance.now() - start;
      }, DEADLINE_MS),
    );
  }
  return { kiln: median(kiln), baseline: median(baseline) };
}

/**
 * On a quiet page: Restart with a warm spare loaded (until session.restart() resolves), and
 * the spare that the Restart then starts, until it has loaded. Then, once the frame has
 * loaded the next worker's code again, a new worker with no spare (a WorkerHandle of its
 * own, until ready) against a bare loadPyodide worker on the same page.
 */
export async function spareAndRestart(page) {
  const restart = [], spare = [], worker = [], bare = [];
  for (let i = 0; i < TRIALS + 2; i++) {
    const trial = await page.evaluate(async () => {
      // The spare and the next worker's code loaded, and the trial before's workers gone: a quiet page.
      await window.kiln.sparesReady();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      let start = performance.now();
      await window.session.restart();
      const restartMs = performance.now() - start;
      // The Restart took the spare; the next one starts loading as the restarted session is ready.
      start = performance.now();
      await window.kiln.sparesLoaded();
      const spareMs = performance.now() - start;
      const check = await window.session.run("1+1");
      if (check.value?.["text/plain"] !== "2") throw new Error("the restarted session does not run");
      await window.kiln.sparesReady();
      start = performance.now();
      const handle = new window.kiln.WorkerHandle(window.kiln.defaultConfig);
      await handle.ready;
      const workerMs = performance.now() - start;
      handle.terminate();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const { worker, loadedMs } = await window.kiln.bareWorker();
      worker.terminate();
      return { restartMs, spareMs, workerMs, bareMs: loadedMs };
    });
    restart.push(trial.restartMs);
    spare.push(trial.spareMs);
    worker.push(trial.workerMs);
    bare.push(trial.bareMs);
  }
  return { restart: median(restart), spare: median(spare), newWorker: median(worker), bare: median(bare), trials: { restart, spare, worker, bare } };
}

/** Long tasks on a fresh harness page from the session's "ready" until its spare has loaded. */
export async function spareTasksHarness(browser, origin) {
  const longest = [], loadMs = [];
  for (let i = 0; i < TRIALS; i++) {
    const { page, context } = await openPage(browser);
    try {
      await onNewDocument(page, recordPage);
      await page.goto(`${origin}/harness.html?start=session`);
      const ready = await waitFor(page, "a PythonSession to be ready", () => window.kiln?.startedAt);
      const loaded = await page.evaluate(() => window.kiln.sparesReady().then(() => performance.now()));
      longest.push(await longestTask(page, ready, loaded));
      loadMs.push(loaded - ready);
    } finally {
      await context.close();
    }
  }
  return { longestTaskMs: spread(longest), spareLoadMs: median(loadMs) };
}
