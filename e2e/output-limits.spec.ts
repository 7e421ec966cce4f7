import { stat } from "node:fs/promises";
import type { Locator, Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { longestTask, watchLongTasks } from "./support/long-tasks";
import { defineOldDatabase } from "./support/stored";
import { answered, messages, openChat, requests, script, sendMessage, uniqueKey } from "./support/chat";
import { editor, openPlayground, output, run } from "./support/playground";

/** The attack: 12 MB of HTML in one display, then 60 MB of plain text in another. */
const FLOOD = `display({"text/html": "<i>x</i>" * 1_500_000}, raw=True)
display({"text/plain": "y" * 60_000_000}, raw=True)
print("flooded")`;

/** Both displays say what was cut, and each downloads whole: the run really made that much. */
async function expectCutAndKept(page: Page, where: Locator): Promise<void> {
  const html = where.getByRole("note").filter({ hasText: "This HTML output is 12,000,000 characters" });
  await expect(html).toContainText("only its first 100,000 are kept with the output, and the whole value is kept as a file to download");
  await expect(where.getByText(/This HTML is shown as its source text/)).toBeVisible();
  await expect(where.locator("iframe")).toHaveCount(0);
  const text = where.getByRole("note").filter({ hasText: "This text output is 60,000,000 characters" });
  await expect(text).toBeVisible();
  for (const [note, name, size] of [
    [html, "output.html", 12_000_000],
    [text, "output.txt", 60_000_000],
  ] as const) {
    const download = page.waitForEvent("download");
    await note.getByRole("button", { name: new RegExp(`^Download ${name.replace(".", "\\.")}`) }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe(name);
    expect((await stat(await file.path())).size).toBe(size);
  }
}

/** After a reload: no main-thread task took over 200 ms, and the page still works. */
async function expectResponsive(page: Page): Promise<void> {
  expect(await longestTask(page), "the longest main-thread task since the page was loaded, in ms").toBeLessThanOrEqual(200);
  await page.getByRole("button", { name: "Settings" }).click();
  const dialog = page.getByRole("dialog", { name: "Settings" });
  await expect(dialog).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
}

test("the Playground keeps a flood of displays within limits, and opens quickly with it saved", async ({ page }) => {
  test.setTimeout(240_000);
  await watchLongTasks(page);
  await openPlayground(page);
  await run(page, FLOOD);
  await expect(output(page)).toContainText("flooded");
  await expectCutAndKept(page, output(page));

  await page.reload();
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await expectCutAndKept(page, output(page));
  await expectResponsive(page);
  await run(page, "print(6 * 7)");
  await expect(output(page)).toContainText("42");
});

/** Bundles whose keys are not MIME types, and bundles of many tiny entries after the run's budget is used up. */
const KEYS = `key = "k" * 5_000_000
display({key: "a" * 100_001}, raw=True)
many = {f"c{i}": "b" for i in range(20_000)}
display(many, raw=True)
for _ in range(6):
    display({f"text/t{i}": "a" * 100_000 for i in range(32)}, raw=True)
display({f"text/c{i}": "b" for i in range(20_000)}, raw=True)
print("key", len(key), "entries", len(many))`;

test("the Playground keeps displays with huge or countless keys to a few bounded notices, and opens quickly with them saved", async ({ page }) => {
  test.setTimeout(240_000);
  await watchLongTasks(page);
  await openPlayground(page);
  await run(page, KEYS);
  await expect(output(page)).toContainText("key 5000000 entries 20000");
  const expectBounded = async () => {
    const notes = output(page).getByRole("note");
    await expect(notes.filter({ hasText: "1 representation of this output was dropped: an output keeps at most 32" })).toHaveCount(1);
    await expect(notes.filter({ hasText: "20,000 representations of this output were dropped" })).toHaveCount(1);
    // The display of 20,000 tiny text types after the budget: one notice, of 32 cut types, and the rest counted.
    const tiny = notes.filter({ hasText: "19,968 representations of this output were dropped" });
    await expect(tiny).toContainText("This text/c31 output is 1 character, over the limit");
    await expect(tiny.getByRole("button", { name: /^Download output\.txt/ })).toHaveCount(32);
    expect(await notes.count()).toBeLessThanOrEqual(8);
    const text = await output(page).evaluate((el) => el.textContent ?? "");
    expect(text).not.toContain("kkkkkkkkkk");
    expect(text.length).toBeLessThan(20_000_000);
  };
  await expectBounded();

  await page.reload();
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await expect(output(page)).toContainText("key 5000000 entries 20000");
  await expectBounded();
  await expectResponsive(page);
});

test("in chat, a flood of displays is cut, the model is told in words, and the conversation reopens quickly", async ({ page }) => {
  test.setTimeout(240_000);
  const key = uniqueKey("flood");
  const call = (code: string) => ({ content: [{ type: "tool_use" as const, name: "python", input: { code } }] });
  const say = (text: string) => ({ content: [{ type: "text" as const, text }] });
  await script(key, [call(FLOOD), say("Flooded."), call("print(6 * 7)"), say("Still here.")]);
  await watchLongTasks(page);
  await openChat(page, key);
  await sendMessage(page, "Show a lot.");
  await answered(page, "Flooded.");
  const cell = page.getByRole("region", { name: "Python cell" });
  await expect(cell).toContainText("flooded");
  await expectCutAndKept(page, cell);

  const sent = await requests(key);
  const body = sent[1].body as { messages: { content: { type: string; content?: { type: string; text?: string }[] }[] }[] };
  const result = body.messages[2].content.find((block) => block.type === "tool_result");
  const told = result?.content?.find((part) => part.type === "text")?.text ?? "";
  expect(told).toContain("This HTML output is 12,000,000 characters, over the limit: only its first 100,000 are kept with the output");
  expect(told).toContain("The person sees it as source text, not rendered.");
  expect(told).toContain("This text output is 60,000,000 characters, over the limit");
  expect(told.length).toBeLessThan(25_000);

  await page.reload();
  await expect(messages(page).getByText("Flooded.")).toBeVisible({ timeout: 60_000 });
  await expectCutAndKept(page, cell);
  await expectResponsive(page);
  await sendMessage(page, "Once more.");
  await answered(page, "Still here.");
  await expect(cell.nth(1)).toContainText("42");
});

test("outputs of any size stored by an older version open quickly, cut to the limits and kept whole", async ({ page }) => {
  test.setTimeout(240_000);
  await watchLongTasks(page);
  // A page of the app's origin that opens no database: the database is made as the version
  // before notebooks (schema 4) made it, before this version ever opens it, with the
  // Playground's output inside its record, and a conversation whose Python cell showed the same.
  await page.goto("/icon.svg");
  await defineOldDatabase(page);
  await page.evaluate(
    () =>
      new Promise<void>((resolve, reject) => {
        const outputs = [
          { kind: "display", data: { "text/html": "<i>x</i>".repeat(1_500_000) } },
          { kind: "display", data: { "text/plain": "y".repeat(60_000_000) } },
          { kind: "stream", name: "stdout", text: "flooded\n" },
        ];
        const now = Date.now();
        void (window as unknown as { kilnOldDatabase: (version: number) => Promise<IDBDatabase> }).kilnOldDatabase(4).then((db) => {
          const tx = db.transaction(["playground", "conversations", "messages"], "readwrite");
          tx.objectStore("playground").put({ code: "print('old')", updatedAt: now, outputs }, "current");
          tx.objectStore("conversations").put({ id: "old", title: "Old flood", createdAt: now, updatedAt: now, usage: { inputTokens: 0, outputTokens: 0 } });
          const base = { conversationId: "old", createdAt: now };
          tx.objectStore("messages").put({ ...base, id: "old-1", seq: 0, role: "user", content: [{ type: "text", text: "Show a lot." }] });
          tx.objectStore("messages").put({
            ...base,
            id: "old-2",
            seq: 1,
            role: "assistant",
            status: "done",
            content: [{ type: "tool_call", id: "call-1", name: "python", input: { code: "flood()" } }],
          });
          tx.objectStore("messages").put({
            ...base,
            id: "old-3",
            seq: 2,
            role: "user",
            content: [{ type: "tool_result", callId: "call-1", content: [{ type: "text", text: "flooded" }] }],
            cells: [{ toolUseId: "call-1", code: "flood()", outputs, status: "ok", durationMs: 1000 }],
          });
          tx.objectStore("messages").put({ ...base, id: "old-4", seq: 3, role: "assistant", status: "done", content: [{ type: "text", text: "Flooded long ago." }] });
          tx.oncomplete = () => {
            db.close();
            resolve();
          };
          tx.onerror = () => reject(tx.error);
        }, reject);
      }),
  );

  // This version opens it: the old Playground is the notebook "Playground", the only one listed, and opens.
  await page.goto("/#/playground");
  const notebooks = page.getByRole("list", { name: "Notebooks" });
  await expect(notebooks.getByRole("listitem")).toHaveCount(1, { timeout: 60_000 });
  await notebooks.getByRole("button", { name: "Playground", exact: true }).click();
  await expect(notebooks.getByRole("button", { name: "Playground", exact: true })).toHaveAttribute("aria-current", "true");
  await expect(page.getByRole("textbox", { name: "Notebook title" })).toHaveValue("Playground");
  await expect(editor(page)).toContainText("print('old')");
  await expect(page.getByRole("status")).toContainText("Python ready", { timeout: 90_000 });
  await expect(output(page)).toContainText("flooded");
  await expectCutAndKept(page, output(page));
  await expectResponsive(page);
  await run(page, "print(6 * 7)");
  await expect(output(page)).toContainText("42");

  await page.goto("/#/chat");
  await page.reload();
  await expect(messages(page).getByText("Flooded long ago.")).toBeVisible({ timeout: 60_000 });
  await expectCutAndKept(page, page.getByRole("region", { name: "Python cell" }));
  await expectResponsive(page);
});
