import { expect, test } from "./support/fixtures";
import { openPlayground, output, run, startRun } from "./support/playground";
import type { Page } from "@playwright/test";

/** Start `code`, press Stop once it is running, and wait for the run to end. */
async function runAndStop(page: Page, code: string, waitMs = 300): Promise<void> {
  const finished = await startRun(page, code);
  await expect(page.getByRole("status")).toContainText("Running");
  await page.waitForTimeout(waitMs);
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

test("Stop interrupts await asyncio.sleep", async ({ playground: page }) => {
  await run(page, "waiting = 'kept'");
  await runAndStop(page, "import asyncio\nawait asyncio.sleep(1000)");
  await expect(output(page)).toContainText("Interrupted after");
  await expectValue(page, "waiting", "'kept'");
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
  await page.getByRole("button", { name: "Settings" }).click();
  await page.getByLabel("Run deadline (seconds, 0 = none)").fill("2");
  await page.getByRole("button", { name: "Save" }).click();
  await run(page, "deadline_kept = 7");
  await run(page, "while True:\n    pass");
  await expect(output(page)).toContainText("Timed out after 2");
  await run(page, "sum(range(10**13))");
  await expect(output(page)).toContainText("Timed out after 2");
  await expect(output(page)).toContainText("Variables restored: deadline_kept.");
  await expectValue(page, "deadline_kept", "7");
});
