import type { Locator, Page } from "@playwright/test";
import { expect, test as base } from "./support/test";
import { answered, openChat, script, sendMessage, uniqueKey } from "./support/chat";
import { serveCellPages, type CellPages } from "./support/cell-pages";
import { KILN_ORIGIN } from "./support/host-pages";
import { cell, openPlayground, output, run } from "./support/playground";
import { openGroup } from "./support/settings";
import { expectNoSidewaysScroll, expectTouchTargets, PHONE } from "./support/phone";

// Playwright reads a fixture's dependencies from its first parameter: here, none.
// eslint-disable-next-line no-empty-pattern
const test = base.extend<object, { cellPages: CellPages }>({ cellPages: [({}, use) => serveCellPages(use), { scope: "worker" }] });
test.use(PHONE);

/** A line of code far wider than the phone, and a print of one. */
const LONG_LINE = `wide = "${"abcdefghij".repeat(30)}"`;
const WIDE_PRINT = `print("${"0123456789".repeat(40)}")`;

/** Open the drawer behind `button`: the panel shows, and focus is inside it. */
async function openDrawer(page: Page, button: Locator, panel: Locator): Promise<void> {
  await expect(panel).toBeHidden();
  await button.tap();
  await expect(button).toHaveAttribute("aria-expanded", "true");
  await expect(panel).toBeVisible();
  const controls = await button.getAttribute("aria-controls");
  expect(await page.evaluate((id) => document.getElementById(id!)?.contains(document.activeElement), controls)).toBe(true);
}

/** The drawer closed: the panel is gone and focus is back on its button. */
async function closed(button: Locator, panel: Locator): Promise<void> {
  await expect(panel).toBeHidden();
  await expect(button).toHaveAttribute("aria-expanded", "false");
  await expect(button).toBeFocused();
}

/** Open the drawer, then close it with Escape and with a tap on the page beside it. */
async function escapeAndTapOutside(page: Page, button: Locator, panel: Locator): Promise<void> {
  await openDrawer(page, button, panel);
  await page.keyboard.press("Escape");
  await closed(button, panel);
  await openDrawer(page, button, panel);
  const drawer = (await panel.evaluate((element) => {
    const box = element.closest(".drawer")!.getBoundingClientRect();
    return { left: box.left, right: box.right };
  }))!;
  // Beside the drawer, halfway down the screen: the shade over the page.
  await page.touchscreen.tap(drawer.left > 20 ? 10 : 380, 420);
  await closed(button, panel);
}

test("a chat turn with a tool call on a phone: the Message box takes the width, code and output scroll in place", async ({ page }) => {
  const key = uniqueKey("phone-chat");
  await script(key, [
    { content: [{ type: "tool_use", name: "python", input: { code: `${LONG_LINE}\nprint(len(wide))\n${WIDE_PRINT}` } }] },
    { content: [{ type: "text", text: "The string has **300** letters." }] },
  ]);
  await openChat(page, key);
  const message = page.getByRole("textbox", { name: "Message" });
  const width = (await message.boundingBox())!.width;
  expect(width).toBeGreaterThanOrEqual(0.7 * PHONE.viewport.width);
  await sendMessage(page, "How long is it?");
  await answered(page, "The string has 300 letters.");
  const pythonCell = page.getByRole("region", { name: "Python cell" });
  await expect(pythonCell).toContainText("300");
  await expect(pythonCell).toContainText("0123456789".repeat(3));
  await expectNoSidewaysScroll(page);
  // The cell stays inside the screen, however long its lines.
  const box = (await pythonCell.boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(PHONE.viewport.width);
  expect(await expectTouchTargets(page)).toBeGreaterThan(5);
});

test("on a phone the conversation list and the files open as drawers from their buttons", async ({ page }) => {
  await page.goto("/#/chat");
  const conversationsButton = page.getByRole("button", { name: "Conversations" });
  const conversations = page.getByRole("list", { name: "Conversations" });
  // Closed, one button answers to each name (open, the drawer's Upload files would too: the tests then ask for the exact name).
  await expect(page.getByRole("button", { name: "Conversations" })).toHaveCount(1);
  await expect(page.getByRole("button", { name: "Files" })).toHaveCount(1);
  const filesButton = page.getByRole("button", { name: "Files", exact: true });
  // The panel holding the list "Files" (empty, the list has no size to see).
  const files = page.getByRole("region", { name: "Your files" });
  await expect(page.getByRole("textbox", { name: "Message" })).toBeVisible();
  await expectNoSidewaysScroll(page);

  await escapeAndTapOutside(page, conversationsButton, conversations);
  // A choice made closes it: a new chat, then the first one again.
  await page.getByRole("heading", { level: 1 }).waitFor();
  const firstTitle = await page.getByRole("heading", { level: 1 }).textContent();
  await openDrawer(page, conversationsButton, conversations);
  await expect(conversations.getByRole("listitem")).toHaveCount(1);
  await page.getByRole("button", { name: "New chat" }).tap();
  await closed(conversationsButton, conversations);
  await page.getByRole("textbox", { name: "Message" }).fill("Kept as a draft");
  await openDrawer(page, conversationsButton, conversations);
  await expect(conversations.getByRole("listitem")).toHaveCount(2);
  await expectTouchTargets(page);
  await expectNoSidewaysScroll(page);
  await conversations.getByRole("listitem").nth(1).getByRole("button", { name: firstTitle!, exact: true }).tap();
  await closed(conversationsButton, conversations);

  await escapeAndTapOutside(page, filesButton, files);
  await openDrawer(page, filesButton, files);
  await expect(page.getByRole("button", { name: "Upload files" })).toBeVisible();
  await expect(files.getByRole("list", { name: "Files" })).toHaveCount(1);
  await expectTouchTargets(page);
  await expectNoSidewaysScroll(page);
});

test("Settings on a phone fills the screen, and Save stays in view while the groups are open", async ({ page }) => {
  await page.goto("/#/chat");
  await page.getByRole("button", { name: "Settings" }).tap();
  const dialog = page.getByRole("dialog", { name: "Settings" });
  await expect(dialog).toBeVisible();
  const box = (await dialog.boundingBox())!;
  expect(box).toEqual({ x: 0, y: 0, width: PHONE.viewport.width, height: PHONE.viewport.height });
  for (const name of ["Anthropic", "OpenAI", "Gemini", "OpenAI-compatible"]) await openGroup(dialog, name);
  const save = dialog.getByRole("button", { name: "Save" });
  await expect(save).toBeInViewport({ ratio: 1 });
  await expectNoSidewaysScroll(page);
  await expectTouchTargets(page);
  // Filling a field at the top scrolls the dialog: Save is still in view.
  const anthropic = dialog.getByRole("group", { name: "Anthropic", exact: true });
  await anthropic.getByLabel("API key").fill("sk-phone-1");
  await expect(save).toBeInViewport({ ratio: 1 });
  await save.tap();
  await expect(dialog).toBeHidden();
  await page.getByRole("button", { name: "Settings" }).tap();
  await openGroup(dialog, "Anthropic");
  await expect(anthropic.getByLabel("API key")).toHaveValue("sk-phone-1");
});

test("a Playground run on a phone: its notebooks and files open as drawers, and a wide cell scrolls in itself", async ({ page }) => {
  await openPlayground(page);
  await run(page, `${LONG_LINE}\n${WIDE_PRINT}\nlen(wide)`);
  await expect(output(page)).toContainText("300");
  await expect(output(page)).toContainText("0123456789".repeat(3));
  await expectNoSidewaysScroll(page);
  const box = (await cell(page).boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(PHONE.viewport.width);
  expect(await expectTouchTargets(page)).toBeGreaterThan(10);

  const notebooksButton = page.getByRole("button", { name: "Notebooks" });
  const notebooks = page.getByRole("list", { name: "Notebooks" });
  await escapeAndTapOutside(page, notebooksButton, notebooks);
  await expect(page.getByRole("button", { name: "Files" })).toHaveCount(1);
  const filesButton = page.getByRole("button", { name: "Files", exact: true });
  // The panel holding the list "Files" (empty, the list has no size to see).
  const files = page.getByRole("region", { name: "Your files" });
  await escapeAndTapOutside(page, filesButton, files);
  // A new notebook is a choice: the drawer closes on it, opened.
  await openDrawer(page, notebooksButton, notebooks);
  await expectTouchTargets(page);
  const count = await notebooks.getByRole("listitem").count();
  await page.getByRole("button", { name: "New notebook" }).tap();
  await closed(notebooksButton, notebooks);
  await expect(page.getByRole("textbox", { name: "Notebook title" })).toHaveValue("Untitled notebook");
  await openDrawer(page, notebooksButton, notebooks);
  await expect(notebooks.getByRole("listitem")).toHaveCount(count + 1);
  await expectNoSidewaysScroll(page);
});

test("widgets on a phone: embed.html framed in a page, and a cell made by embed.js", async ({ page, cellPages }) => {
  const code = `${LONG_LINE}\n${WIDE_PRINT}`;
  const path = cellPages.add(`
<h1>A lesson</h1>
<iframe id="framed" title="Framed widget" src="${KILN_ORIGIN}/embed.html?code=${encodeURIComponent(code)}" allow="cross-origin-isolated" style="width:100%;height:320px;border:0"></iframe>
<pre class="kiln">${code}</pre>`);
  await page.goto(cellPages.sameSite + path);
  for (const frame of [page.frameLocator("#framed"), page.frameLocator('iframe[title="Python cell 1"]')]) {
    const out = frame.getByRole("region", { name: "Output" });
    const before = Number(await out.getAttribute("data-finished-runs", { timeout: 60_000 }));
    await frame.getByRole("button", { name: "Run", exact: true }).tap();
    await expect(out).toHaveAttribute("data-finished-runs", String(before + 1), { timeout: 90_000 });
    await expect(out).toContainText("0123456789".repeat(3));
  }
  await expectNoSidewaysScroll(page);
  for (const selector of ["#framed", 'iframe[title="Python cell 1"]']) {
    const frame = (await page.locator(selector).elementHandle())!.contentFrame();
    await expectNoSidewaysScroll((await frame)!);
    await expectTouchTargets((await frame)!);
  }
});

test("the phone checks themselves fail on a page that scrolls sideways, a small target, and a button cut off at the edge", async ({ page }) => {
  await page.setContent(`<!doctype html><meta name="viewport" content="width=device-width">
    <body style="margin:0"><button id="ok" style="width:48px;height:48px">OK</button></body>`);
  // A page that holds: both checks pass (one target measured).
  await expectNoSidewaysScroll(page);
  expect(await expectTouchTargets(page)).toBe(1);
  // Something wider than the screen makes the page scroll sideways.
  await page.evaluate(() => document.body.insertAdjacentHTML("beforeend", '<div id="wide" style="width:600px;height:10px"></div>'));
  await expect(expectNoSidewaysScroll(page)).rejects.toThrow(/scrolls sideways/);
  // A small target, then one cut off at the screen's edge (its box clips it: the page itself does not scroll).
  await page.evaluate(() => {
    document.getElementById("wide")!.remove();
    document.body.insertAdjacentHTML("beforeend", '<button id="small" style="width:20px;height:20px">s</button>');
  });
  await expectNoSidewaysScroll(page);
  await expect(expectTouchTargets(page)).rejects.toThrow(/"button s"/);
  await page.evaluate(() => {
    document.getElementById("small")!.remove();
    document.body.insertAdjacentHTML(
      "beforeend",
      '<div style="position:relative;overflow:hidden;height:60px"><button style="position:absolute;left:360px;width:60px;height:48px">Save</button></div>',
    );
  });
  await expectNoSidewaysScroll(page);
  await expect(expectTouchTargets(page)).rejects.toThrow(/"button Save"/);
});
