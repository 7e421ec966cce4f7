/**
 * The Settings dialog: providers folded to one line each, saying what is set.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { apiBase, uniqueKey } from "./support/chat";
import { openaiBase, uniqueSession } from "./support/openai";
import { saveSettings } from "./support/settings";

const PROVIDERS = ["Anthropic", "OpenAI", "Gemini", "OpenAI-compatible"];

async function openSettings(page: Page) {
  await page.getByRole("button", { name: "Settings" }).click();
  const dialog = page.getByRole("dialog", { name: "Settings" });
  await expect(dialog).toBeVisible();
  return dialog;
}

/** A provider group's line: the button that opens and folds it. */
const line = (page: Page, name: string) =>
  page.getByRole("dialog", { name: "Settings" }).getByRole("group", { name, exact: true }).getByRole("button", { name: new RegExp(`^${name} · `) });

test("each provider is one line until opened: not set up, or its model, server and key", async ({ page }) => {
  await page.goto("/#/chat");
  const dialog = await openSettings(page);
  // Four lines, no form: no key, Base URL or model field is shown.
  for (const name of PROVIDERS) {
    await expect(line(page, name)).toHaveText(`${name} · not set up`);
    await expect(line(page, name)).toHaveAttribute("aria-expanded", "false");
  }
  await expect(dialog.getByRole("textbox", { name: /API key|Base URL/ })).toHaveCount(0);
  await expect(dialog.getByRole("combobox", { name: "Model" })).toHaveCount(0);

  // Opened from the keyboard, a group shows its fields; the others stay folded.
  await line(page, "Anthropic").focus();
  await page.keyboard.press("Enter");
  const anthropic = dialog.getByRole("group", { name: "Anthropic", exact: true });
  await expect(anthropic.getByLabel("API key")).toBeVisible();
  await expect(anthropic.getByLabel("Base URL")).toBeVisible();
  await expect(anthropic.getByLabel("Model")).toBeVisible();
  await expect(dialog.getByRole("textbox", { name: /API key/ })).toHaveCount(1);
  // What is typed is kept when the group folds again, and the line says it is not stored yet.
  await anthropic.getByLabel("API key").fill(uniqueKey("folded"));
  await line(page, "Anthropic").click();
  await expect(anthropic.getByLabel("API key")).toBeHidden();
  await expect(line(page, "Anthropic")).toHaveText("Anthropic · claude-sonnet-5-5 · key changed, not stored yet");
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();

  const session = uniqueSession("folded");
  await saveSettings(page, {
    "Anthropic › API key": uniqueKey("folded"),
    "Anthropic › Base URL": apiBase(),
    "OpenAI-compatible › Base URL": openaiBase(session),
    "OpenAI-compatible › Model": "qwen2.5-coder:7b",
  });
  await page.reload();
  await openSettings(page);
  await expect(line(page, "Anthropic")).toHaveText(`Anthropic · claude-sonnet-5-5 · ${apiBase()} · key stored · new chats start here`);
  await expect(line(page, "OpenAI-compatible")).toHaveText(`OpenAI-compatible · qwen2.5-coder:7b · ${openaiBase(session)} · no key`);
  await expect(line(page, "OpenAI")).toHaveText("OpenAI · not set up");
  for (const name of PROVIDERS) await expect(line(page, name)).toHaveAttribute("aria-expanded", "false");
  // Opening a set-up group shows what was saved.
  await line(page, "OpenAI-compatible").click();
  await expect(dialog.getByRole("group", { name: "OpenAI-compatible", exact: true }).getByLabel("Model")).toHaveValue("qwen2.5-coder:7b");
});
