import type { Locator } from "@playwright/test";
import { expect, test } from "./support/test";
import { longestTask, watchLongTasks } from "./support/long-tasks";
import { answered, messages, openChat, requests, script, sendMessage, uniqueKey } from "./support/chat";
import { openPlayground, output, run } from "./support/playground";

/** Emphasis delimiters that marked alone takes seconds to read (see src/components/Markdown.test.ts). */
const BOMB = "_*a".repeat(8000);

/** The Markdown shown as plain text inside `within`, each whole. */
async function plainTexts(within: Locator): Promise<string[]> {
  return within.locator(".markdown-plain").evaluateAll((nodes) => nodes.map((node) => node.textContent ?? ""));
}

test("a model answer whose Markdown marked would read for seconds is shown as its text, without freezing the page, also after a reload", async ({ page }) => {
  await watchLongTasks(page);
  const key = uniqueKey("markdown-bomb");
  const answer = `Done. ${BOMB}`;
  await script(key, [{ content: [{ type: "text", text: answer }] }]);
  await openChat(page, key);
  await sendMessage(page, "Show it");
  await answered(page, "Done.");
  expect(await requests(key)).toHaveLength(1);
  expect(await longestTask(page)).toBeLessThan(1000);
  expect(await plainTexts(messages(page))).toEqual([answer]);

  await page.reload();
  await expect(messages(page).getByText("Done.")).toBeVisible({ timeout: 60_000 });
  await page.getByRole("textbox", { name: "Message" }).fill("still typing");
  await expect(page.getByRole("textbox", { name: "Message" })).toHaveValue("still typing");
  expect(await longestTask(page)).toBeLessThan(1000);
  expect(await plainTexts(messages(page))).toEqual([answer]);
});

test("Markdown from Python that marked would read for seconds is shown as its text, without freezing the page", async ({ page }) => {
  await watchLongTasks(page);
  await openPlayground(page);
  await run(page, `for i in range(3): display({"text/markdown": "_*a" * 8000}, raw=True)\nprint("printed")`);
  await expect(output(page)).toContainText("printed", { timeout: 60_000 });
  await expect.poll(() => plainTexts(output(page)), { timeout: 60_000 }).toEqual([BOMB, BOMB, BOMB]);
  expect(await longestTask(page)).toBeLessThan(1000);
});
