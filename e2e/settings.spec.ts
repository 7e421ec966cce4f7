/**
 * The Settings dialog: providers folded to one line each, saying what is set; and Delete
 * everything, which leaves nothing of Kiln's in the browser, in every tab.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { answered, apiBase, messages, script, sendMessage, uniqueKey } from "./support/chat";
import { openaiBase, uniqueSession } from "./support/openai";
import { openPlayground } from "./support/playground";
import { saveSettings, storedSettings } from "./support/settings";

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
    await expect(line(page, name)).toHaveAccessibleName(`${name} · not set up`);
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
  await expect(line(page, "Anthropic")).toHaveAccessibleName("Anthropic · claude-sonnet-5-5 · key changed, not stored yet");
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
  await expect(line(page, "Anthropic")).toHaveAccessibleName(`Anthropic · claude-sonnet-5-5 · ${apiBase()} · key stored · new chats start here`);
  await expect(line(page, "OpenAI-compatible")).toHaveAccessibleName(`OpenAI-compatible · qwen2.5-coder:7b · ${openaiBase(session)} · no key`);
  await expect(line(page, "OpenAI")).toHaveAccessibleName("OpenAI · not set up");
  for (const name of PROVIDERS) await expect(line(page, name)).toHaveAttribute("aria-expanded", "false");
  // Opening a set-up group shows what was saved.
  await line(page, "OpenAI-compatible").click();
  await expect(dialog.getByRole("group", { name: "OpenAI-compatible", exact: true }).getByLabel("Model")).toHaveValue("qwen2.5-coder:7b");
});

/** What the browser keeps for the page's origin, as the page itself can read it. */
function kept(page: Page) {
  return page.evaluate(async () => ({
    databases: (await indexedDB.databases()).map((database) => database.name).sort(),
    caches: await caches.keys(),
    localStorage: Object.keys(localStorage),
    sessionStorage: Object.keys(sessionStorage),
    serviceWorkers: (await navigator.serviceWorker.getRegistrations()).length,
  }));
}

test.describe("Delete everything", () => {
  // The service worker and its caches are part of what is kept.
  test.use({ serviceWorkers: "allow" });

  test("deletes every database, cache, stored key and the service worker, in this tab and another, which keep nothing more", async ({ page }) => {
    test.setTimeout(300_000);
    const key = uniqueKey("delete-everything");
    await page.goto("/#/chat");
    await saveSettings(page, { "Anthropic › API key": key, "Anthropic › Base URL": apiBase() });
    await script(key, [{ content: [{ type: "text", text: "Noted." }] }]);
    await sendMessage(page, "Remember the launch date");
    await answered(page, "Noted.");
    // A notebook with a file, and Python started from its stored snapshot.
    await openPlayground(page);
    const chooser = page.waitForEvent("filechooser");
    await page.getByRole("button", { name: "Upload files" }).click();
    await (await chooser).setFiles({ name: "secret.csv", mimeType: "text/csv", buffer: Buffer.from("a,b\n1,2\n") });
    await expect(page.getByRole("list", { name: "Files" })).toContainText("secret.csv");
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 90_000 });

    // A second tab of Kiln, with the conversation open.
    const other = await page.context().newPage();
    await other.goto("/#/chat");
    await expect(messages(other)).toContainText("Remember the launch date");
    // What a page may keep in Web Storage (Kiln notes deletes under way there).
    for (const tab of [page, other]) await tab.evaluate(() => (localStorage.setItem("kiln-note", "1"), sessionStorage.setItem("kiln-note", "1")));

    // There was something of each kind before.
    expect(await storedSettings(page)).toContain(key);
    for (const tab of [page, other]) {
      const before = await kept(tab);
      expect(before.databases).toEqual(expect.arrayContaining(["kiln", "kiln-python-snapshots"]));
      expect(before.caches.length).toBeGreaterThan(0);
      expect(before.localStorage).toContain("kiln-note");
      expect(before.sessionStorage).toContain("kiln-note");
      expect(before.serviceWorkers).toBe(1);
    }

    // Asked first, in the page: Cancel keeps everything.
    await page.getByRole("button", { name: "Settings" }).click();
    const dialog = page.getByRole("dialog", { name: "Settings" });
    await dialog.getByRole("button", { name: "Delete everything Kiln keeps in this browser" }).click();
    const question = dialog.getByRole("group", { name: "Delete everything Kiln keeps in this browser?" });
    await expect(question).toContainText("This cannot be undone.");
    await question.getByRole("button", { name: "Cancel" }).click();
    await expect(question).toBeHidden();
    expect((await kept(page)).databases).toContain("kiln");

    await dialog.getByRole("button", { name: "Delete everything Kiln keeps in this browser" }).click();
    await question.getByRole("button", { name: "Delete", exact: true }).click();
    await expect(page.getByRole("status")).toContainText("Everything Kiln kept in this browser was deleted, in every tab of Kiln", { timeout: 90_000 });
    await expect(other.getByRole("status")).toContainText("Everything Kiln kept in this browser was deleted from another tab of Kiln", { timeout: 90_000 });
    for (const tab of [page, other]) {
      await expect(tab.getByRole("button", { name: "Reload" })).toBeVisible();
      await expect(tab.getByRole("textbox", { name: "Message" })).toHaveCount(0);
    }

    const nothing = { databases: [], caches: [], localStorage: [], sessionStorage: [], serviceWorkers: 0 };
    for (const tab of [page, other]) expect(await kept(tab)).toEqual(nothing);
    // Nothing is written again while the tabs stay open (their Python and timers stopped with the delete).
    await page.waitForTimeout(3000);
    for (const tab of [page, other]) expect(await kept(tab)).toEqual(nothing);

    // Reloaded, Kiln starts afresh: no key, no conversation but a new one.
    await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: "Reload" }).click()]);
    await page.goto("/#/chat");
    await expect(page.getByRole("button", { name: "Untitled conversation", exact: true })).toBeVisible();
    await expect(page.getByRole("list", { name: "Conversations" }).getByRole("listitem")).toHaveCount(1);
    await page.getByRole("button", { name: "Settings" }).click();
    await expect(line(page, "Anthropic")).toHaveAccessibleName("Anthropic · not set up");
  });
});
