import { expect, type Page } from "@playwright/test";
import { saveSettings } from "./settings";
import type { RecordedRequest, Reply } from "../fake-anthropic/server";

/**
 * The stand-in Anthropic API's base URL, `http://127.0.0.1:<port>/<token>` (the route prefix is the run's secret
 * token): e2e/support/global-setup.ts starts the server and sets `KILN_FAKE_ANTHROPIC_URL`. Read on each call, so
 * that loading this module never depends on the global setup having run (listing tests does not run it).
 */
export function apiBase(): string {
  const url = process.env.KILN_FAKE_ANTHROPIC_URL;
  if (!url) {
    throw new Error(
      "KILN_FAKE_ANTHROPIC_URL is not set: the stand-in Anthropic API is started by e2e/support/global-setup.ts, " +
        "which `playwright test` runs before the tests (with playwright.config.ts as its config)",
    );
  }
  return url;
}

/** Queue the stand-in API's next replies for requests made with `key`. */
export async function script(key: string, replies: Reply[]): Promise<void> {
  const response = await fetch(`${apiBase()}/__kiln/script`, { method: "POST", body: JSON.stringify({ key, replies }) });
  expect(response.ok).toBe(true);
}

/** Every Messages request the stand-in API received with `key`. */
export async function requests(key: string): Promise<RecordedRequest[]> {
  return (await fetch(`${apiBase()}/__kiln/requests?key=${encodeURIComponent(key)}`)).json();
}

/** A key of its own per test, so tests running side by side never share replies. */
export function uniqueKey(name: string): string {
  return `sk-test-${name}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Open Chat with an API key and the stand-in server as Base URL. */
export async function openChat(page: Page, apiKey: string): Promise<void> {
  await page.goto("/#/chat");
  await saveSettings(page, { "Anthropic › API key": apiKey, "Anthropic › Base URL": apiBase() });
}

export async function sendMessage(page: Page, text: string): Promise<void> {
  await page.getByRole("textbox", { name: "Message" }).fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

/** Wait until the answer ending with `finalText` is in and the turn is over (Send is back). */
export async function answered(page: Page, finalText: string): Promise<void> {
  // The first answer waits for the conversation's Python to start: seconds on a small machine.
  await expect(messages(page).getByText(finalText)).toBeVisible({ timeout: 90_000 });
  await expect(page.getByRole("button", { name: "Send" })).toBeVisible({ timeout: 90_000 });
}

/** The conversation's messages (not the sidebar or the title). */
export function messages(page: Page) {
  return page.getByRole("log", { name: "Messages" });
}
