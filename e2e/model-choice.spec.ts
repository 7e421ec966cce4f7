/**
 * New conversations start with the model chosen last, in the picker or in Settings, also after a
 * reload; a conversation that was answered keeps its own.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { answered, apiBase, requests, script, sendMessage, uniqueKey } from "./support/chat";
import { openaiBase, openaiRequests, scriptOpenAI, uniqueSession } from "./support/openai";
import { saveSettings } from "./support/settings";

const picker = (page: Page) => page.getByRole("combobox", { name: "Model for this conversation" });
/** The model the open conversation answers with, as its picker shows it. */
const chosen = (page: Page) => picker(page).locator("option:checked");
const newChat = (page: Page) => page.getByRole("button", { name: "New chat" }).click();

test("the model chosen in the picker, then in Settings, is the one new conversations start with, after a reload too", async ({ page }) => {
  const key = uniqueKey("model-choice");
  const session = uniqueSession("model-choice");
  await page.goto("/#/chat");
  await saveSettings(page, {
    "Anthropic › API key": key,
    "Anthropic › Base URL": apiBase(),
    "OpenAI-compatible › Base URL": openaiBase(session),
  });
  // Before any choice: the first provider set up.
  await expect(chosen(page)).toHaveText("Anthropic · claude-sonnet-5-5");

  // Chosen in the picker (a model the local server lists): this conversation and the next new one use it.
  await picker(page).focus();
  await expect(picker(page).getByRole("option", { name: "OpenAI-compatible · qwen2.5-coder:7b" })).toHaveCount(1);
  await picker(page).selectOption({ label: "OpenAI-compatible · qwen2.5-coder:7b" });
  await scriptOpenAI(session, [{ content: [{ type: "text", text: "Qwen answers." }] }]);
  await sendMessage(page, "First on qwen");
  await answered(page, "Qwen answers.");
  await newChat(page);
  await expect(page.getByRole("button", { name: "Untitled conversation", exact: true })).toHaveAttribute("aria-current", "true");
  await expect(chosen(page)).toHaveText("OpenAI-compatible · qwen2.5-coder:7b");

  // A reload keeps the choice.
  await page.reload();
  await newChat(page);
  await expect(chosen(page)).toHaveText("OpenAI-compatible · qwen2.5-coder:7b");
  await scriptOpenAI(session, [{ content: [{ type: "text", text: "Still qwen." }] }]);
  await sendMessage(page, "After the reload");
  await answered(page, "Still qwen.");
  expect((await openaiRequests(session)).map((request) => (request.body as { model: string }).model)).toEqual(["qwen2.5-coder:7b", "qwen2.5-coder:7b"]);

  // A model changed in Settings, for a provider already set up: the next new conversation uses it.
  await saveSettings(page, { "Anthropic › Model": "claude-haiku-test" });
  await newChat(page);
  await expect(chosen(page)).toHaveText("Anthropic · claude-haiku-test");
  await script(key, [{ content: [{ type: "text", text: "Haiku answers." }] }]);
  await sendMessage(page, "Now on Claude");
  await answered(page, "Haiku answers.");
  expect((await requests(key)).map((request) => (request.body as { model: string }).model)).toEqual(["claude-haiku-test"]);

  // A conversation answered before keeps the model it was answered with.
  await page.getByRole("button", { name: "First on qwen", exact: true }).click();
  await expect(chosen(page)).toHaveText("OpenAI-compatible · qwen2.5-coder:7b");
});
