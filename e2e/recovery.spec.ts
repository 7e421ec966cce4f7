import { expect, test } from "./support/test";
import { cell, editor, openPlayground, output, run, startRun } from "./support/playground";
import { saveSettings } from "./support/settings";
import { readStorageOnPage, storedRecords } from "./support/stored";
import type { Page } from "@playwright/test";

/**
 * Start `code`, press Stop once it is running, and wait for the run to end. The cell first
 * prints a line and has it sent at once (`time.sleep` sends what was printed, and binds no
 * name): Stop is pressed when that line is shown, so the code itself is under way; or, given
 * `underWay`, when the code itself has printed that.
 */
async function runAndStop(page: Page, code: string, underWay = "cell started"): Promise<void> {
  const finished = await startRun(page, `print("cell started")\n__import__("time").sleep(0)\n${code}`);
  await expect(output(page)).toContainText(underWay);
  await expect(page.getByRole("status")).toContainText("Running");
  await page.getByRole("button", { name: "Stop" }).click();
  await finished();
}

/** A fresh interpreter (from the warm spare), so restored-name lists hold only this test's. */
async function restart(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Restart" }).click();
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
}

async function expectValue(page: Page, expression: string, expected: string): Promise<void> {
  await run(page, expression);
  await expect(output(page)).toHaveText(expected);
}

test("Stop interrupts time.sleep at once; variables survive", async ({ playground: page }) => {
  await run(page, "napping = 'awake'");
  await runAndStop(page, "import time\ntime.sleep(1000)");
  await expect(output(page)).toContainText("Interrupted after");
  await expect(output(page)).toContainText("Variables are kept");
  await expectValue(page, "napping", "'awake'");
});

// The worker's own postMessage reaches its frame, which listens to nothing of it after start-up:
// each 50 MB message is still copied there, on the thread the frame shares with the page.
test("Python flooding its frame with 50 MB messages leaves the page usable: Stop ends it, and the variables are back", async ({ playground: page }) => {
  await run(page, "before_flood = 'kept'");
  const finished = await startRun(
    page,
    "import js, time\nbig = js.Uint8Array.new(50_000_000)\nn = 0\nwhile True:\n    js.postMessage(big)\n    n += 1\n    if n % 10 == 0:\n        print('posted', n)\n        time.sleep(0)",
  );
  // The flood is under way: 30 messages, 1.5 GB, went to the frame.
  await expect(output(page)).toContainText("posted 30", { timeout: 60_000 });
  await page.getByRole("button", { name: "Stop" }).click();
  await finished();
  await expect(output(page)).toContainText("Interrupted after");
  await expectValue(page, "before_flood", "'kept'");
});

/** Stop `code` a few times over: each run ends softly (no restart), and `check` then holds. */
async function stopSoftly(page: Page, code: string, check: [expression: string, expected: string], underWay?: string): Promise<void> {
  for (let round = 0; round < 3; round++) {
    await runAndStop(page, code, underWay);
    await expect(output(page)).toContainText("Interrupted after");
    await expect(output(page)).toContainText("Variables are kept");
    await expectValue(page, ...check);
  }
}

// Stop reaches a run waiting in `await` two ways (SIGINT and a cancel of its task), which race.
test("Stop interrupts await asyncio.sleep, without a restart, round after round", async ({ playground: page }) => {
  await run(page, "waiting = 'kept'");
  await stopSoftly(page, "import asyncio\nawait asyncio.sleep(1000)", ["waiting", "'kept'"]);
});

// Here asyncio's own code runs between the loop's steps, where a Stop is often seen first. Stop
// is pressed once the loop has taken 100 steps in this run, however slowly the machine runs it.
test("Stop interrupts a loop that awaits between its steps, without a restart", async ({ playground: page }) => {
  await run(page, "ticks = 0");
  const loop = "import asyncio\nsteps = 0\nwhile True:\n    ticks += 1\n    steps += 1\n    if steps == 100:\n        print('100 steps')\n        __import__('time').sleep(0)\n    await asyncio.sleep(0)";
  await stopSoftly(page, loop, ["ticks >= 100 and steps >= 100", "True"], "100 steps");
});

test("code stuck in C is stopped by replacing the worker; picklable state is restored", async ({
  playground: page,
}) => {
  await restart(page);
  await run(
    page,
    `from dataclasses import dataclass
import json as js0n
@dataclass
class Point:
    x: int
    y: int
    def norm(self): return (self.x ** 2 + self.y ** 2) ** 0.5
def twice(v): return 2 * v
number, text, items = 42, "text", [1, 2, 3]
mapping, unique, pair = {"k": [1]}, {3, 4}, (5, 6)
point = Point(3, 4)
numbers = (i for i in range(3))`,
  );
  await runAndStop(page, "sum(range(10**13))");
  const out = output(page);
  await expect(out).toContainText("Interrupted after");
  await expect(out).toContainText(
    "Python did not stop, so it was restarted. Variables restored: Point, dataclass, items, js0n, mapping, number, pair, point, text, twice, unique. Lost: numbers.",
  );
  await expectValue(
    page,
    "(number, text, items, mapping, unique, pair, point.norm(), twice(4), js0n.dumps(pair))",
    "(42, 'text', [1, 2, 3], {'k': [1]}, {3, 4}, (5, 6), 5.0, 8, '[5, 6]')",
  );
});

test("two runaway cells in a row both recover", async ({ playground: page }) => {
  await restart(page);
  await run(page, "first = 1");
  await runAndStop(page, "sum(range(10**13))");
  await expect(output(page)).toContainText("Variables restored: first.");
  await run(page, "second = first + 1");
  await runAndStop(page, "sum(range(10**14))");
  await expect(output(page)).toContainText("Variables restored: first, second.");
  await expectValue(page, "first + second", "3");
});

test("a catastrophic regular expression is stopped", async ({ playground: page }) => {
  await run(page, "pattern_kept = True");
  await runAndStop(page, 'import re\nre.match(r"(a+)+$", "a" * 64 + "b")');
  await expect(output(page)).toContainText("Interrupted after");
  await expectValue(page, "pattern_kept", "True");
});

test("os._exit kills the worker: reported as crashed, recovered", async ({ playground: page }) => {
  await restart(page);
  await run(page, "before_exit = 'present'");
  await run(page, "import os\nos._exit(1)");
  await expect(output(page)).toContainText("Python crashed");
  await expect(output(page)).toContainText("Variables restored: before_exit.");
  await expectValue(page, "before_exit", "'present'");
});

test("Python that fills its JavaScript heap kills its frame's process: the page notices, and a new frame takes over with the variables", async ({
  page,
}) => {
  test.setTimeout(240_000);
  // An interpreter of its own: the frame's process dies, with every worker in it.
  await openPlayground(page);
  await run(page, "heap_kept = 'present'");
  // Playwright takes the crash of a frame's process for its page's, and then drives the page no
  // more: from there on, the test reads the page and acts on it through the DevTools protocol.
  const cdp = await page.context().newCDPSession(page);
  const uncaught: string[] = [];
  cdp.on("Runtime.exceptionThrown", ({ exceptionDetails }) => uncaught.push(exceptionDetails.exception?.description ?? exceptionDetails.text));
  await cdp.send("Runtime.enable");
  let processCrashed = false;
  page.on("crash", () => (processCrashed = true));
  // The frame as it is now, to tell it from the one that replaces it.
  await expect(page.locator("iframe[title=Python]")).toHaveCount(1);
  await page.locator("iframe[title=Python]").evaluate((frame) => frame.setAttribute("data-first", ""));
  // V8 ends the whole process when a worker's heap is full; nothing reaches the page.
  await startRun(page, "import js\nhoard = js.Array.new()\nwhile True:\n    hoard.push(js.Array.new(10**6).fill(1.5))");
  await expect(page.getByRole("status")).toContainText("Running");
  // The attack ran: the frame's process crashed.
  await expect.poll(() => processCrashed, { timeout: 90_000 }).toBe(true);
  const read = async (expression: string): Promise<unknown> =>
    (await cdp.send("Runtime.evaluate", { expression, returnByValue: true })).result.value;
  // Cell 1 of the notebook, as the helpers drive it.
  const inCell = (selector: string) => `document.querySelector('section[aria-label="Cell 1"] ${selector}')`;
  const outputText = () => read(`${inCell('section[aria-label="Output"]')}?.innerText.trim() ?? ""`);
  const statusText = () => read(`document.querySelector('[role=status]')?.textContent ?? ""`);
  // And failed: the run ends, saying why, and the variables are back in a new frame's worker.
  await expect
    .poll(outputText, { timeout: 90_000 })
    .toContain("Python crashed: its sandbox stopped responding, most likely out of memory. Variables restored: heap_kept.");
  await expect.poll(statusText, { timeout: 60_000 }).toContain("Python ready");
  // The dead frame is gone; a new one holds Python now.
  expect(await read(`[...document.querySelectorAll("iframe[title=Python]")].map((frame) => frame.hasAttribute("data-first"))`)).toEqual([false]);
  // The next run works in the new frame.
  await cdp.send("Runtime.evaluate", { expression: `${inCell('[aria-label="Python code"]')}.focus()` });
  await cdp.send("Input.dispatchKeyEvent", { type: "keyDown", key: "a", code: "KeyA", modifiers: 2, windowsVirtualKeyCode: 65 });
  await cdp.send("Input.dispatchKeyEvent", { type: "keyUp", key: "a", code: "KeyA", modifiers: 2, windowsVirtualKeyCode: 65 });
  await cdp.send("Input.insertText", { text: "print('still', heap_kept)" });
  await cdp.send("Runtime.evaluate", { expression: `${inCell('button[aria-label="Run cell"]')}.click()` });
  await expect.poll(outputText, { timeout: 30_000 }).toBe("still present");
  expect(uncaught, "uncaught errors in the page").toEqual([]);
});

test("runaway recursion in Python is a RecursionError; in C it crashes the worker, which recovers", async ({
  playground: page,
}) => {
  await run(page, "deep_kept = [1]");
  await run(page, "def down(n): return down(n + 1)\ndown(0)");
  await expect(output(page).getByRole("alert")).toContainText("RecursionError: maximum recursion depth exceeded");
  // repr() of a deeply nested list recurses in C until the WebAssembly stack overflows.
  await run(page, "nested = []\nfor _ in range(10**6):\n    nested = [nested]\nlen(repr(nested))");
  await expect(output(page)).toContainText("Python crashed: the WebAssembly stack overflowed (runaway recursion).");
  await expect(output(page)).toContainText("deep_kept");
  await expectValue(page, "deep_kept", "[1]");
});

test("memory bombs end as an error or a recovered crash; the page stays responsive", async ({ page }) => {
  test.setTimeout(150_000);
  // An interpreter of its own: the bomb leaves a huge value behind that every later state capture would try to keep.
  await openPlayground(page);
  await run(page, "bomb_kept = 'yes'");
  // On 32-bit WebAssembly a 10 GB size does not even fit an index: OverflowError.
  await run(page, 'b"x" * 10**10');
  await expect(output(page).getByRole("alert")).toContainText(/OverflowError|MemoryError/);
  await run(page, 'b"x" * (2**31 - 1)');
  await expect(output(page).getByRole("alert")).toContainText("MemoryError");
  // A list growing without end fills the 4 GiB WebAssembly memory.
  const finished = await startRun(page, "hoard = []\nwhile True:\n    hoard.append(bytearray(64 * 1024 * 1024))");
  await expect(page.getByRole("status")).toContainText("Running");
  // The page stays responsive meanwhile: the editor takes typing.
  await page.getByRole("button", { name: "Settings" }).click();
  await expect(page.getByRole("dialog", { name: "Settings" })).toBeVisible();
  await page.getByRole("button", { name: "Cancel" }).click();
  await finished(120_000);
  await expect(output(page)).toContainText(/MemoryError|Python crashed/);
  await expectValue(page, "bomb_kept", "'yes'");
});

test("the run deadline stops a runaway cell with status timeout", async ({ page }) => {
  await openPlayground(page);
  // Saved and the dialog closed: the deadline applies from the next run.
  await saveSettings(page, { "Run deadline (seconds, 0 = none)": "2" });
  await run(page, "deadline_kept = 7");
  // Each runaway is seen running, then ended by the deadline (no Stop is pressed): it reads as
  // timed out, never after less than the deadline, and soon after it (how soon, on a machine
  // that other tests load, is for the benchmark's interrupt rows).
  const timedOutAfter = async () => {
    const line = (await output(page).innerText()).match(/Timed out after ([\d.]+) s\./);
    expect(line, "the run reads as timed out").not.toBeNull();
    return Number(line![1]);
  };
  let finished = await startRun(page, "while True:\n    pass");
  await expect(page.getByRole("status")).toContainText("Running");
  await finished();
  expect(await timedOutAfter()).toBeGreaterThanOrEqual(2);
  expect(await timedOutAfter()).toBeLessThan(15);
  finished = await startRun(page, "sum(range(10**13))");
  await expect(page.getByRole("status")).toContainText("Running");
  await finished();
  expect(await timedOutAfter()).toBeGreaterThanOrEqual(2);
  expect(await timedOutAfter()).toBeLessThan(15);
  await expect(output(page)).toContainText("Variables restored: deadline_kept.");
  await expectValue(page, "deadline_kept", "7");
});

/** The saved code of the open notebook's first cell, read without `get` (which the test below holds back). */
async function storedCode(page: Page): Promise<string | undefined> {
  const id = await page.evaluate(() => decodeURIComponent(/^#\/playground\/([^/?#]+)/.exec(location.hash)?.[1] ?? ""));
  const notebooks = await storedRecords<{ id: string; cells: { source: string }[] }>(page, "notebooks");
  return notebooks.find((notebook) => notebook.id === id)?.cells[0]?.source;
}

test("the saved code arriving late never replaces what the person types: the editor waits for it", async ({ page }) => {
  await openPlayground(page);
  await setSavedCode(page, "saved = 'from last time'");
  // From now on the page's read of the saved notebook answers only when the test says so.
  await readStorageOnPage(page);
  await page.addInitScript(() => {
    let released = false;
    const state = window as unknown as { heldReads: number; releaseSavedCode: () => void };
    state.heldReads = 0;
    state.releaseSavedCode = () => (released = true);
    const get = IDBObjectStore.prototype.get;
    IDBObjectStore.prototype.get = function (this: IDBObjectStore, ...args: Parameters<IDBObjectStore["get"]>) {
      const request = get.apply(this, args);
      if (this.name !== "notebooks") return request;
      state.heldReads++;
      const count = this.count.bind(this);
      const listen = request.addEventListener.bind(request);
      // The answer waits, its transaction kept going by one read after another (the notebook's
      // outputs are read in it next), and is given inside it once the test lets it through.
      const held = (listener: EventListener) => (event: Event) => {
        const wait = () => (released ? listener.call(request, event) : (count().onsuccess = wait));
        wait();
      };
      request.addEventListener = ((type: string, listener: EventListener, options?: AddEventListenerOptions) =>
        listen(type, type === "success" ? held(listener) : listener, options)) as typeof request.addEventListener;
      return request;
    };
  });
  await page.reload();
  // The read really is held, and Python starts meanwhile; no editor is offered to type into yet.
  await expect.poll(() => page.evaluate(() => (window as unknown as { heldReads: number }).heldReads)).toBe(1);
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await expect(page.getByRole("button", { name: "Run all", exact: true })).toBeDisabled();
  await expect(editor(page)).toHaveCount(0);

  await page.evaluate(() => (window as unknown as { releaseSavedCode: () => void }).releaseSavedCode());
  // The person types the moment the editor is there.
  await editor(page).click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("\ntyped = 'just now'\nprint(saved, '/', typed)");
  const both = "saved = 'from last time'\ntyped = 'just now'\nprint(saved, '/', typed)";
  // Nothing replaces it afterwards: it runs as typed, stays in the editor and is what is saved.
  const finished = Number(await output(page).getAttribute("data-finished-runs"));
  await cell(page).getByRole("button", { name: "Run cell", exact: true }).click();
  await expect(output(page)).toHaveAttribute("data-finished-runs", String(finished + 1));
  await expect(output(page)).toHaveText("from last time / just now");
  await expect.poll(() => storedCode(page)).toBe(both);
  expect(await editorCode(page)).toBe(both);
});

/** The editor's text, line by line. */
async function editorCode(page: Page): Promise<string> {
  return (await editor(page).locator(".cm-line").allTextContents()).join("\n");
}

/** Type `code` as the code of the open notebook's first cell and wait until it is saved. */
async function setSavedCode(page: Page, code: string): Promise<void> {
  await editor(page).fill(code);
  await expect.poll(() => storedCode(page)).toBe(code);
}

test("a worker that an earlier cell silenced holds up nothing: Stop ends the waiting run, and the worker is replaced with the variables", async ({
  page,
}) => {
  await openPlayground(page);
  await run(page, "silenced_kept = 41");
  // The cell ends well; 300 ms later its worker closes itself, and answers nothing from then on.
  await run(page, "import js\njs.setTimeout(js.close, 300)");
  await page.waitForTimeout(1000);
  const finished = await startRun(page, "print(silenced_kept + 1)");
  // The attack ran: the next run gets no answer.
  await page.waitForTimeout(2000);
  await expect(page.getByRole("status")).toContainText("Running");
  await expect(output(page)).not.toContainText("42");
  await page.getByRole("button", { name: "Stop" }).click();
  await finished(5_000);
  await expect(output(page)).toContainText("Stopped before it started.");
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 30_000 });
  await expectValue(page, "silenced_kept + 1", "42");
});

/**
 * In the harness, with a 3 s run deadline: run `planted`, then bring its saved state back in a
 * new session, as a reload does, and that session's saved state in a third. Each restore
 * reports what came back, how long it took, and what `check` evaluates to after it.
 */
async function plantAndRestoreTwice(page: Page, planted: string, check: string) {
  await page.goto("/harness.html");
  await page.waitForFunction(() => Boolean(window.kiln));
  return page.evaluate(
    async ({ planted, check }) => {
      const config = { ...window.kiln.defaultConfig, timeoutMs: 3000 };
      const first = new window.kiln.PythonSession(config);
      const restoreFrom = async (saved: typeof first.savedState) => {
        const session = new window.kiln.PythonSession(config);
        await session.ready;
        const started = performance.now();
        const report = await session.restoreState(saved);
        const restoreMs = performance.now() - started;
        const after = await session.run(check);
        const state = session.savedState;
        session.dispose();
        return { report, restoreMs, after: after.value?.["text/plain"], state };
      };
      await first.ready;
      const result = await first.run(planted);
      const saved = first.savedState;
      first.dispose();
      const second = await restoreFrom(saved);
      const third = await restoreFrom(second.state);
      const summary = ({ state, ...rest }: typeof second) => ({ ...rest, names: state.names, source: state.cells.map(([, source]) => source).join("") });
      return { planted: result.status, savedNames: saved.names, second: summary(second), third: summary(third) };
    },
    { planted, check },
  );
}

test("a value that never finishes unpickling is let go after the deadline: the restore ends, and is not held up by it again", async ({ page }) => {
  test.setTimeout(120_000);
  const outcome = await plantAndRestoreTwice(
    page,
    `
class Stuck:
    def __reduce__(self):
        return (exec, ("while True: pass",))
stuck = Stuck()
kept = [1, 2, 3]`,
    "(kept, 'stuck' in globals())",
  );
  expect(outcome.planted).toBe("ok");
  expect(outcome.savedNames).toEqual(expect.arrayContaining(["kept", "stuck"]));
  // The attack ran: unpickling `stuck` looped until the deadline's interrupt ended it.
  expect(outcome.second.restoreMs).toBeGreaterThan(2900);
  expect(outcome.second.report).toEqual({ kept: expect.arrayContaining(["Stuck", "kept"]), lost: ["stuck"] });
  expect(outcome.second.after).toBe("([1, 2, 3], False)");
  // What a reload would bring back next no longer holds it.
  expect(outcome.second.names).not.toContain("stuck");
  expect(outcome.third.restoreMs).toBeLessThan(2000);
  expect(outcome.third.after).toBe("([1, 2, 3], False)");
});

test("a class whose body loops only when replayed is let go after the deadline, and the next restore does not replay it", async ({ page }) => {
  test.setTimeout(120_000);
  // Definitions are replayed before values come back, so on a replay "ran" is not there yet.
  const outcome = await plantAndRestoreTwice(
    page,
    `
ran = True
class Looping:
    while "ran" not in globals():
        pass
def still_defined():
    return 42`,
    "(ran, 'Looping' in globals(), still_defined())",
  );
  expect(outcome.planted).toBe("ok");
  // The attack ran: replaying the class body looped until the deadline's interrupt ended it.
  expect(outcome.second.restoreMs).toBeGreaterThan(2900);
  expect(outcome.second.report.lost).toEqual(["Looping"]);
  expect(outcome.second.after).toBe("(True, False, 42)");
  // What a reload would bring back next keeps the cell's other definition, not the loop.
  expect(outcome.second.source).toContain("def still_defined():");
  expect(outcome.second.source).not.toContain("while");
  expect(outcome.third.restoreMs).toBeLessThan(2000);
  expect(outcome.third.report).toEqual({ kept: expect.arrayContaining(["ran", "still_defined"]), lost: [] });
  expect(outcome.third.after).toBe("(True, False, 42)");
});

test("Restart during a run ends it, and says the variables are cleared", async ({ playground: page }) => {
  await run(page, "cleared_by_restart = 1");
  const finished = await startRun(page, 'print("cell started")\n__import__("time").sleep(0)\n__import__("time").sleep(60)');
  await expect(output(page)).toContainText("cell started");
  await page.getByRole("button", { name: "Restart" }).click();
  await finished();
  await expect(output(page)).toContainText("Python was restarted: its variables are cleared.");
  await expect(output(page)).not.toContainText("Variables are kept");
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await expectValue(page, "'cleared_by_restart' in globals()", "False");
});
