/**
 * Claims of the docs that need a test of their own: the key kept only in memory, the cap on Python
 * rounds, the cut of long tool results, an unknown model, Stop inside a chat turn, Stop of a
 * waiting input(), what the Files list shows, upload by drag and drop, and settings saved in two tabs.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { openGroup, saveSettings, storedSettings } from "./support/settings";
import { answered, apiBase, messages, openChat, requests, script, sendMessage, uniqueKey } from "./support/chat";
import { openPlayground, output, run, startRun } from "./support/playground";

const cells = (page: Page) => page.getByRole("region", { name: "Python cell" });
const call = (code: string) => ({ content: [{ type: "tool_use" as const, name: "python", input: { code } }] });
const say = (text: string) => ({ content: [{ type: "text" as const, text }] });

test("\"Don't remember this key\" keeps the key in this tab only: it works now, is never stored, and is gone after a reload", async ({ page }) => {
  const key = uniqueKey("memory");
  await script(key, [say("Heard you.")]);
  await page.goto("/#/chat");
  await page.getByRole("button", { name: "Settings" }).click();
  const anthropic = await openGroup(page.getByRole("dialog", { name: "Settings" }), "Anthropic");
  await anthropic.getByLabel("API key").fill(key);
  await anthropic.getByLabel("Base URL").fill(apiBase());
  await anthropic.getByLabel("Don't remember this key").check();
  await page.getByRole("dialog", { name: "Settings" }).getByRole("button", { name: "Save" }).click();
  // Saved once the dialog closes: until then the page behind it takes no typing.
  await expect(page.getByRole("dialog", { name: "Settings" })).toBeHidden();
  await sendMessage(page, "Hello");
  await answered(page, "Heard you.");
  expect((await requests(key))[0].headers["x-api-key"] ?? (await requests(key))[0].headers.authorization).toContain(key);
  const stored = await storedSettings(page);
  expect(stored).toContain(apiBase());
  expect(stored).not.toContain(key);
  await page.reload();
  await page.getByRole("button", { name: "Settings" }).click();
  await expect(page.getByRole("dialog", { name: "Settings" }).getByRole("group", { name: "Anthropic", exact: true }).getByLabel("API key")).toHaveValue("");
});

test("settings saved in one tab are not undone by a save in another tab opened before", async ({ page }) => {
  await page.goto("/#/playground");
  const other = await page.context().newPage();
  await other.goto("/#/playground");
  // The other tab's Settings are open since before the first tab's save.
  await other.getByRole("button", { name: "Settings" }).click();
  const dialog = other.getByRole("dialog", { name: "Settings" });
  await expect(dialog).toBeVisible();
  await saveSettings(page, { "Gemini › API key": "AIza-kept-from-the-first-tab" });
  expect(await storedSettings(page)).toContain("AIza-kept-from-the-first-tab");
  // There, something else is changed and saved.
  await dialog.getByLabel("Run deadline (seconds, 0 = none)").fill("45");
  await dialog.getByRole("button", { name: "Save" }).click();
  await expect(dialog).toBeHidden();
  const stored = await storedSettings(page);
  expect(stored).toContain('"runTimeoutSeconds":45');
  expect(stored).toContain("AIza-kept-from-the-first-tab");
  // And the other tab now has the key too, so a later save there keeps it as well.
  await other.getByRole("button", { name: "Settings" }).click();
  await expect(dialog.getByRole("group", { name: "Gemini", exact: true }).getByLabel("API key")).toHaveValue("AIza-kept-from-the-first-tab");
});

test("after 12 rounds of Python in one answer Kiln stops and says so; a long tool result is cut with a notice", async ({ page }) => {
  const key = uniqueKey("rounds");
  await script(key, [call("print('x' * 30000)"), ...Array.from({ length: 11 }, (_, i) => call(`print(${i})`)), say("never reached")]);
  await openChat(page, key);
  await sendMessage(page, "Loop forever.");
  await expect(messages(page).getByRole("alert")).toContainText("Stopped after 12 rounds of Python in one answer.", { timeout: 90_000 });
  await expect(cells(page)).toHaveCount(12);
  await expect(messages(page)).not.toContainText("never reached");
  const sent = await requests(key);
  expect(sent).toHaveLength(12);
  const body = sent[1].body as { messages: { content: { type: string; content?: { text?: string }[] }[] }[] };
  const text = body.messages.at(-1)!.content.find((b) => b.type === "tool_result")!.content![0].text!;
  expect(text).toMatch(/\[output cut: \d+ more characters not shown\]$/);
  expect(text.length).toBeLessThan(20_100);
});

test("an unknown model says so and keeps the message", async ({ page }) => {
  const key = uniqueKey("model");
  await script(key, [{ status: 404, error: { type: "not_found_error", message: "model: claude-nonexistent" } }]);
  await openChat(page, key);
  await sendMessage(page, "Which model are you?");
  await expect(page.getByRole("alert")).toContainText("Model not found");
  await expect(messages(page)).toContainText("Which model are you?");
});

test("Stop while Python runs inside a chat turn interrupts Python and keeps the partial answer", async ({ page }) => {
  const key = uniqueKey("stop");
  // Stop pressed while the conversation's Python is still starting: the run never starts.
  await script(key, [{ content: [{ type: "tool_use", name: "python", input: { code: "while True: pass" } }] }]);
  await openChat(page, key);
  await sendMessage(page, "Spin.");
  await expect(cells(page).locator(".cell-status")).toHaveText(/running/);
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(cells(page).locator(".cell-status")).toHaveText(/^interrupted/);
  await expect(page.getByRole("button", { name: "Send" })).toBeVisible();
  // (Had the loop started anyway, Python would be busy for good and the next run below could not happen.)

  // Printed output is posted in batches, and a sleep posts what waits: "counting" shows once the loop has taken 1000 steps.
  const loop = "import time\nn = 0\nwhile True:\n    n += 1\n    if n == 1000:\n        print('counting')\n        time.sleep(0.01)";
  await script(key, [{ content: [{ type: "text", text: "Counting forever." }, { type: "tool_use", name: "python", input: { code: loop } }] }]);
  await sendMessage(page, "Count.");
  const counting = cells(page).nth(1);
  await expect(counting.locator(".cell-output")).toContainText("counting", { timeout: 90_000 });
  await expect(counting.locator(".cell-status")).toHaveText(/running/);
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(counting.locator(".cell-status")).toHaveText(/^interrupted/);
  await expect(page.getByRole("button", { name: "Send" })).toBeVisible();
  await expect(messages(page)).toContainText("Counting forever.");
  // Python lived on: the loop's variable is there.
  await script(key, [call("print('steps taken:', n >= 1000)"), say("Checked.")]);
  await sendMessage(page, "Check n.");
  await answered(page, "Checked.");
  await expect(cells(page).nth(2).locator(".cell-output")).toHaveText("steps taken: True");
});

test("Stop cancels a waiting input(); the prompt can no longer be answered", async ({ page }) => {
  await openPlayground(page);
  const done = await startRun(page, "name = input('Your name? ')\nprint('hello', name)");
  await expect(output(page).getByRole("textbox", { name: "Python input" })).toBeVisible();
  await page.getByRole("button", { name: "Stop" }).click();
  await done();
  await expect(output(page)).toContainText("Interrupted");
  // Softly: Python itself stopped waiting, it was not replaced.
  await expect(output(page)).toContainText("Variables are kept");
  await expect(output(page).getByRole("textbox", { name: "Python input" })).toHaveCount(0);
  await expect(output(page)).not.toContainText("hello");
});

test("files Python creates, changes or deletes show up; hidden files and __pycache__ are not listed; a dropped file is uploaded", async ({ page }) => {
  await openPlayground(page);
  const files = page.getByRole("list", { name: "Files" });
  await run(page, "import os\nopen('made.txt', 'w').write('one')\nopen('gone.txt', 'w').write('x')\nopen('.secret', 'w').write('h')\nos.makedirs('__pycache__', exist_ok=True)\nopen('__pycache__/m.pyc', 'wb').write(b'c')");
  await expect(files).toContainText("made.txt");
  await expect(files).toContainText("gone.txt");
  await expect(files).not.toContainText(".secret");
  await expect(files).not.toContainText("__pycache__");
  await expect(files.getByRole("listitem").filter({ hasText: "made.txt" })).toContainText("3 bytes");
  await run(page, "import os\nopen('made.txt', 'a').write('-two')\nos.remove('gone.txt')");
  await expect(files.getByRole("listitem").filter({ hasText: "made.txt" })).toContainText("7 bytes");
  await expect(files).not.toContainText("gone.txt");

  // Drag and drop, as from the desktop.
  const transfer = await page.evaluateHandle(() => {
    const data = new DataTransfer();
    data.items.add(new File(["dropped,1\n"], "dropped.csv", { type: "text/csv" }));
    return data;
  });
  // Dropped on the notebook.
  await page.getByRole("region", { name: "Cell 1" }).dispatchEvent("dragover", { dataTransfer: transfer });
  await page.getByRole("region", { name: "Cell 1" }).dispatchEvent("drop", { dataTransfer: transfer });
  await expect(files).toContainText("dropped.csv");
  await run(page, "print(open('dropped.csv').read().strip())");
  await expect(output(page)).toHaveText("dropped,1");
});
