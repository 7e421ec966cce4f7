/**
 * A first visit under React's development checks (`npm run dev` mounts everything twice):
 * one first conversation, and what the person types into it stays.
 */
import { spawn } from "node:child_process";
import { expect, test } from "./support/test";
import { apiBase, uniqueKey } from "./support/chat";
import { freePort } from "./support/ports";
import { saveSettings } from "./support/settings";

// A first visit, on the development server.
test.use({ repeatVisit: false });

test("a first visit makes one conversation, and what is typed right after saving Settings stays", async ({ page }) => {
  test.setTimeout(120_000);
  const port = await freePort();
  const server = spawn("npx", ["vite", "--port", String(port), "--strictPort"], { stdio: "ignore", detached: true });
  try {
    const url = `http://localhost:${port}/#/chat`;
    await expect.poll(async () => (await fetch(url).catch(() => null))?.ok ?? false, { timeout: 60_000 }).toBe(true);
    await page.goto(url);
    await saveSettings(page, { "Anthropic › API key": uniqueKey("first"), "Anthropic › Base URL": apiBase() });
    const box = page.getByRole("textbox", { name: "Message" });
    await box.pressSequentially("Hello, first question", { delay: 5 });
    const conversations = page.getByRole("list", { name: "Conversations" }).getByRole("listitem");
    await expect(conversations).toHaveCount(1);
    // Everything the page stored: still one conversation, and the draft in it.
    await expect
      .poll(() =>
        page.evaluate(
          () =>
            new Promise<unknown>((resolve) => {
              const open = indexedDB.open("kiln");
              open.onsuccess = () => {
                const tx = open.result.transaction(["conversations", "drafts"]);
                const all = tx.objectStore("conversations").getAllKeys();
                const drafts = tx.objectStore("drafts").getAll();
                tx.oncomplete = () => resolve({ conversations: all.result.length, drafts: drafts.result });
              };
            }),
        ),
      )
      .toEqual({ conversations: 1, drafts: ["Hello, first question"] });
    await expect(box).toHaveValue("Hello, first question");
  } finally {
    process.kill(-server.pid!);
  }
});
