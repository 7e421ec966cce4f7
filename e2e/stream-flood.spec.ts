import type { Locator, Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { answered, messages, openChat, requests, script, sendMessage, uniqueKey } from "./support/chat";
import { openPlayground, output, startRun } from "./support/playground";

/** Lines printed to stdout and to stderr in turn: 120,000 switches, about 830 kB (under the 1 MiB print cap). */
const N = 60_000;
const FLOOD = `import sys
for i in range(${N}):
    print(f"a{i}")
    print(f"b{i}", file=sys.stderr)`;
const JOINED = /Output switched between stdout and stderr more than 2000 times/;

/** The main thread's tasks longer than 50 ms, as the document has seen them from its start. */
async function watchLongTasks(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const seen: number[] = [];
    (window as unknown as { kilnLongTasks: number[] }).kilnLongTasks = seen;
    new PerformanceObserver((list) => seen.push(...list.getEntries().map((entry) => entry.duration))).observe({ type: "longtask", buffered: true });
  });
}

async function expectNoLongTask(page: Page): Promise<void> {
  const longest = await page.evaluate(() => Math.max(0, ...(window as unknown as { kilnLongTasks: number[] }).kilnLongTasks));
  expect(longest, "the longest main-thread task since the page was loaded, in ms").toBeLessThan(1000);
}

/** The flood is shown in order: the first lines apart by stream, then a notice, then the rest together up to the last line. */
async function expectShownInOrder(where: Locator): Promise<void> {
  await expect(where.locator("span.stdout").first()).toHaveText("a0\n");
  await expect(where.locator("span.stderr").first()).toHaveText("b0\n");
  await expect(where.getByText(JOINED)).toHaveCount(1);
  const spans = where.locator("span.stdout, span.stderr");
  const text = (await spans.allTextContents()).join("");
  expect(text).toContain(`a${N - 2}\nb${N - 2}\na${N - 1}\nb${N - 1}\n`);
  const lines = text.split("\n").slice(0, -1);
  expect(lines).toHaveLength(2 * N);
  expect(lines.every((line, i) => line === `${"ab"[i % 2]}${Math.floor(i / 2)}`)).toBe(true);
  // What is kept is bounded: a few thousand blocks, not one per line.
  expect(await spans.count()).toBeLessThan(2500);
}

/** Runs `code` in the Playground, long tasks watched from the page's start, and waits for it to end. */
async function runInPlayground(page: Page, code: string): Promise<void> {
  test.setTimeout(300_000);
  await watchLongTasks(page);
  await openPlayground(page);
  const done = await startRun(page, code);
  await done(180_000);
}

test("output that switches between stdout and stderr at every line finishes promptly and keeps the Playground responsive", async ({ page }) => {
  await runInPlayground(page, FLOOD);
  await expectShownInOrder(output(page));
  await expectNoLongTask(page);
});

test("in chat, the same output finishes, is saved bounded, and the model is told it in order", async ({ page }) => {
  test.setTimeout(300_000);
  const key = uniqueKey("stream-flood");
  await script(key, [{ content: [{ type: "tool_use", name: "python", input: { code: FLOOD } }] }, { content: [{ type: "text", text: "Flooded." }] }]);
  await watchLongTasks(page);
  await openChat(page, key);
  await sendMessage(page, "Flood");
  await expect(messages(page).getByText("Flooded.")).toBeVisible({ timeout: 180_000 });
  await answered(page, "Flooded.");
  await expectShownInOrder(messages(page));
  await expectNoLongTask(page);

  const body = (await requests(key))[1].body as { messages: { content: { type: string; content?: { type: string; text?: string }[] }[] }[] };
  const toolResult = body.messages[2].content.find((block) => block.type === "tool_result");
  const told = toolResult?.content?.find((block) => block.type === "text")?.text ?? "";
  // Each stream in the order it was written, cut to the tool result's limit.
  expect(told).toMatch(/stdout:\na0\na1\na2\n/);
  expect(told.length).toBeLessThan(21_000);
});

/**
 * Python that takes over the worker's events port (the port a display is posted on) and posts
 * a line of progress before each piece of text, stdout and stderr in turn: each line of
 * progress used to close the block of text, so every piece became a block of its own.
 */
const FORGED = 20_000;
const FORGE_PROGRESS = `import js
from pyodide.ffi import create_proxy, to_js
post = js.MessagePort.prototype.postMessage
seen = []
def spy(this, *args):
    if not seen and args and getattr(args[0], "type", None) == "display":
        seen.append(this)
    return post.call(this, *args)
js.MessagePort.prototype.postMessage = create_proxy(spy, capture_this=True)
display("start")
js.MessagePort.prototype.postMessage = post
port = seen[0]
mk = lambda d: to_js(d, dict_converter=js.Object.fromEntries)
progress = mk({"type": "progress", "message": "."})
posted = 0
for i in range(${FORGED}):
    port.postMessage(progress)
    port.postMessage(mk({"type": "streams", "runs": [["stdout" if i % 2 == 0 else "stderr", f"f{i}\\n"]]}))
    posted += 1
print(f"posted {posted}")`;

test("progress posted between pieces of text by Python that took the worker over does not split them past the cap", async ({ page }) => {
  await runInPlayground(page, FORGE_PROGRESS);
  const where = output(page);
  // The forged messages were posted, and the page received and showed every piece of them, in order.
  const spans = where.locator("span.stdout, span.stderr");
  const text = (await spans.allTextContents()).join("");
  expect(text).toContain(`posted ${FORGED}\n`);
  expect(text).toContain(Array.from({ length: FORGED }, (_, i) => `f${i}\n`).join(""));
  // Yet they are kept in a bounded number of blocks, after the notice.
  await expect(where.getByText(JOINED)).toHaveCount(1);
  expect(await spans.count()).toBeLessThan(2500);
  await expectNoLongTask(page);
});
