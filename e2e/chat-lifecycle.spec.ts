/**
 * An answer in progress when its conversation is left, deleted or its page closed, and a
 * message that storage cannot take.
 */
import { expect, test } from "./support/test";
import { answered, messages, openChat, requests, script, sendMessage, uniqueKey } from "./support/chat";
import type { Page } from "@playwright/test";
import { fillDisk, holdStores, leavingAsksFirst, setDiskFull, storedRecords } from "./support/stored";

const call = (code: string) => ({ content: [{ type: "tool_use" as const, name: "python", input: { code } }] });
const say = (text: string) => ({ content: [{ type: "text" as const, text }] });
/** A cell that runs 8 s: long enough to be left, deleted or reloaded mid-way on a busy machine. */
const SLOW_CELL = 'print("cell started")\nimport time\ntime.sleep(8)\nprint("cell ended")';

/** Every message the page stored. */
const storedMessages = (page: Page) =>
  storedRecords<{ conversationId: string; status?: string; cells?: { status: string }[] }>(page, "messages");

test("deleting a conversation mid-answer stops it: no request is sent after, and nothing of it is written back", async ({ page }) => {
  const key = uniqueKey("delete-mid");
  await script(key, [call(SLOW_CELL), say("After the cell.")]);
  await openChat(page, key);
  await page.getByRole("button", { name: "New chat" }).click();
  await sendMessage(page, "Doomed topic");
  // The answer is under way: its cell runs.
  await expect(page.getByRole("region", { name: "Python cell" })).toContainText("cell started", { timeout: 90_000 });
  const started = Date.now();
  expect(await requests(key)).toHaveLength(1);
  const before = await storedMessages(page);
  const doomed = before.find((m) => m.status !== undefined)!.conversationId;
  await page.getByRole("button", { name: "Delete Doomed topic" }).click();
  await page.getByRole("group", { name: "Delete Doomed topic?" }).getByRole("button", { name: "Delete", exact: true }).click();
  await expect(page.getByRole("button", { name: "Doomed topic", exact: true })).toHaveCount(0);
  // Long enough for the cell to have ended and its result to have gone back, had the answer gone on.
  await page.waitForTimeout(Math.max(2000, started + 12_000 - Date.now()));
  expect(await requests(key)).toHaveLength(1);
  expect((await storedMessages(page)).filter((m) => m.conversationId === doomed)).toEqual([]);
});

test("a deleted conversation's Python variables leave the page's memory with it", async ({ page }) => {
  const key = uniqueKey("delete-memory");
  await script(key, [call("big = bytes(150 * 2**20)\nprint('held', len(big))"), say("Holding it.")]);
  await openChat(page, key);
  await page.getByRole("button", { name: "New chat" }).click();
  await sendMessage(page, "Hold a lot");
  await answered(page, "Holding it.");
  // Bytes of array buffers alive in the page's JavaScript, after a garbage collection (DevTools).
  const cdp = await page.context().newCDPSession(page);
  const buffers = async () => {
    await cdp.send("HeapProfiler.collectGarbage");
    return (await cdp.send("Runtime.getHeapUsage")).backingStorageSize;
  };
  // The page keeps the variable, to restore it into a new worker after a hard stop.
  expect(await buffers()).toBeGreaterThan(150 * 2 ** 20);
  await page.getByRole("button", { name: "Delete Hold a lot" }).click();
  await page.getByRole("group", { name: "Delete Hold a lot?" }).getByRole("button", { name: "Delete", exact: true }).click();
  await expect(page.getByRole("button", { name: "Hold a lot", exact: true })).toHaveCount(0);
  await expect.poll(buffers, { timeout: 15_000 }).toBeLessThan(50 * 2 ** 20);
});

test("leaving a conversation mid-answer stops the answer there; back in it, it reads Stopped and can be sent to again", async ({ page }) => {
  const key = uniqueKey("switch-mid");
  // Ten blocks, each sent in three pieces 400 ms apart: about 12 s of answer.
  const parts = Array.from({ length: 10 }, (_, i) => ({ type: "text" as const, text: `part${i + 1} ` }));
  await script(key, [{ content: parts, delayMs: 400 }]);
  await openChat(page, key);
  await sendMessage(page, "Count slowly");
  await expect(messages(page).getByText(/part1/)).toBeVisible({ timeout: 90_000 });
  const streaming = Date.now();
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page.getByRole("heading", { name: "Untitled conversation" })).toBeVisible();
  await page.getByRole("button", { name: "Count slowly", exact: true }).click();
  await expect(messages(page).getByText("Stopped.")).toBeVisible();
  await expect(page.getByRole("button", { name: "Send" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Stop" })).toHaveCount(0);
  // The answer stopped when it was left: by the time the whole of it would have come, its end has not.
  await page.waitForTimeout(Math.max(0, streaming + 14_000 - Date.now()));
  await expect(messages(page).getByText(/part10/)).toHaveCount(0);
});

test("an answer and a cell cut off by a reload read as stopped afterwards, not as still going", async ({ page }) => {
  const key = uniqueKey("reload-mid");
  await script(key, [call(SLOW_CELL), say("After the cell.")]);
  await openChat(page, key);
  await sendMessage(page, "Run something slow");
  await expect(page.getByRole("region", { name: "Python cell" })).toContainText("cell started", { timeout: 90_000 });
  // The attack on consistency: the page goes away while the cell runs, once storage holds it as running (written as it starts).
  await expect.poll(async () => (await storedMessages(page)).some((m) => m.cells?.some((cell) => cell.status === "running")), { timeout: 5000 }).toBe(true);
  await page.reload();
  await expect(messages(page).getByText("Run something slow")).toBeVisible();
  await expect(page.getByRole("region", { name: "Python cell" })).not.toContainText("running", { timeout: 10_000 });
  await expect(page.getByRole("button", { name: "Send" })).toBeVisible();
  const stored = await storedMessages(page);
  expect(stored.filter((m) => m.status === "streaming" || m.cells?.some((cell) => cell.status === "running"))).toEqual([]);
});

test("a message that storage cannot take is not sent, says so, and stays in the box", async ({ page }) => {
  const key = uniqueKey("full-disk");
  await script(key, [say("Should never be asked for.")]);
  await openChat(page, key);
  // Storage is full from here on: every write to the messages store fails as a full disk does.
  await fillDisk(page, { messages: true });
  await sendMessage(page, "Keep this text");
  await expect(page.getByText(/Your message could not be saved, so it was not sent \(QuotaExceededError: The quota has been exceeded\)\. Free/)).toBeVisible();
  await expect(page.getByRole("textbox", { name: "Message" })).toHaveValue("Keep this text");
  expect(await requests(key)).toHaveLength(0);
});

test("an answer and a new name that storage refuses are said to be unsaved, and saved once it takes writes again", async ({ page }) => {
  const key = uniqueKey("full-later");
  await script(key, [say("Kept through a full disk.")]);
  await openChat(page, key);
  // From here on storage refuses the answer and the conversation's record, as a full disk does; the question is taken.
  await fillDisk(page, { conversations: true, messages: "assistant" });
  await sendMessage(page, "Fill the disk");
  await answered(page, "Kept through a full disk.");
  await page.getByRole("button", { name: "Rename Fill the disk" }).click();
  await page.getByRole("textbox", { name: "Conversation name" }).fill("Named on a full disk");
  await page.getByRole("textbox", { name: "Conversation name" }).press("Enter");
  const unsaved = page.getByRole("alert").filter({ hasText: "Not saved yet" });
  await expect(unsaved).toContainText("a reload now would lose");
  await expect(unsaved).toContainText("an answer and this conversation's name and settings");
  await expect(unsaved).toContainText("(QuotaExceededError: The quota has been exceeded). Free some space in the browser's storage");
  // The attack ran: neither the answer nor the name is in storage.
  const stored = await storedMessages(page);
  expect(stored.filter((m) => (m as { role?: string }).role === "assistant")).toEqual([]);
  const records = await storedRecords<{ title: string }>(page, "conversations");
  expect(records.map((c) => c.title)).not.toContain("Named on a full disk");
  // Another conversation opened and this one again: the answer is shown as kept, not as storage has it (without it).
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page.getByRole("heading", { name: "Untitled conversation" })).toBeVisible();
  await expect(unsaved).toContainText("changes to another conversation");
  await page.getByRole("button", { name: "Named on a full disk", exact: true }).click();
  await expect(messages(page).getByText("Kept through a full disk.")).toBeVisible();
  // Leaving now asks first; the person stays, and nothing was lost.
  await leavingAsksFirst(page);
  await expect(unsaved).toBeVisible();
  await expect(messages(page).getByText("Kept through a full disk.")).toBeVisible();

  // Space is freed: both are written within seconds, with nothing typed or sent again.
  await setDiskFull(page, false);
  await expect(unsaved).toHaveCount(0, { timeout: 15_000 });
  await page.reload();
  await page.getByRole("button", { name: "Named on a full disk", exact: true }).click();
  await expect(messages(page).getByText("Kept through a full disk.")).toBeVisible();
  expect(await requests(key)).toHaveLength(1);
});

test("a conversation that storage has not read yet sends nothing; variables it cannot read are said so and not written over", async ({ page }) => {
  const key = uniqueKey("unread");
  await script(key, [call("x = 41\nprint('x is', x)"), say("Set x."), call("z = 2\nprint('z set')"), say("Set z."), say("Went on.")]);
  // While sessionStorage says so, the app's reads of stored Python variables fail (its writes still work).
  await page.addInitScript(() => {
    const get = IDBObjectStore.prototype.get;
    IDBObjectStore.prototype.get = function (...args: Parameters<typeof get>) {
      if (sessionStorage.getItem("kilnUnreadable") && this.name === "interpreterState" && this.transaction.mode === "readonly") {
        throw new DOMException("The file could not be read.", "NotReadableError");
      }
      return get.apply(this, args);
    };
  });
  await openChat(page, key);
  await sendMessage(page, "Keep x");
  await answered(page, "Set x.");
  const storedNames = async () =>
    (await storedRecords<{ names?: string[] }>(page, "interpreterState")).flatMap((record) => record.names ?? []).sort();
  await expect.poll(storedNames).toEqual(["x"]);

  await page.evaluate(() => sessionStorage.setItem("kilnUnreadable", "1"));
  await page.reload();
  await page.getByRole("button", { name: "Keep x", exact: true }).click();
  await expect(page.getByRole("status").filter({ hasText: "variables were not brought back" })).toContainText(
    "This conversation's Python variables were not brought back (the browser's storage could not read them: NotReadableError: The file could not be read). They stay saved",
  );
  // A run now does not write its variables over the stored ones it never read.
  await sendMessage(page, "Set z");
  await answered(page, "Set z.");
  await expect(page.getByRole("region", { name: "Python cell" }).nth(1)).toContainText("z set");
  await page.waitForTimeout(1000);
  expect(await storedNames()).toEqual(["x"]);
  await page.evaluate(() => sessionStorage.removeItem("kilnUnreadable"));
  await page.reload();
  await page.getByRole("button", { name: "Keep x", exact: true }).click();
  await expect(page.getByRole("status").filter({ hasText: "Python state restored" })).toHaveText("Python state restored: x.");

  // Another page keeps a write to the messages going, so this page's read of them waits: nothing can be sent meanwhile.
  const held = await holdStores(page, ["messages"]);
  await page.reload();
  await page.getByRole("button", { name: "Keep x", exact: true }).click();
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill("Go on");
  await expect(page.getByRole("button", { name: "Send" })).toBeDisabled();
  await box.press("Enter");
  await page.waitForTimeout(500);
  await expect(box).toHaveValue("Go on");
  expect(await requests(key)).toHaveLength(4);
  await held.release();
  await expect(messages(page).getByText("Set z.")).toBeVisible();
  await page.getByRole("button", { name: "Send" }).click();
  await answered(page, "Went on.");
  // The model got the whole conversation, and the new message is numbered after it.
  const sent = (await requests(key))[4].body as { messages: { role: string; content: unknown }[] };
  expect(JSON.stringify(sent.messages[0])).toContain("Keep x");
  await page.reload();
  await page.getByRole("button", { name: "Keep x", exact: true }).click();
  await expect(messages(page).locator(".message").last()).toContainText("Went on.");
});

test("Stop while a request waits to be retried takes the retry line away", async ({ page }) => {
  const key = uniqueKey("stop-retry");
  const overloaded = { status: 529, error: { type: "overloaded_error", message: "Overloaded" } };
  await script(key, [overloaded, overloaded, overloaded, say("Too late.")]);
  await openChat(page, key);
  await sendMessage(page, "Are you there?");
  const retrying = page.getByText(/Retrying in \d+ s/);
  await expect(retrying).toBeVisible();
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(page.getByRole("button", { name: "Send" })).toBeVisible();
  await expect(retrying).toHaveCount(0);
});

test("a draft typed just before opening another conversation is kept", async ({ page }) => {
  const key = uniqueKey("draft-switch");
  await script(key, [say("First answer.")]);
  await openChat(page, key);
  await sendMessage(page, "First topic");
  await expect(messages(page).getByText("First answer.")).toBeVisible({ timeout: 90_000 });
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page.getByRole("heading", { name: "Untitled conversation" })).toBeVisible();
  const box = page.getByRole("textbox", { name: "Message" });
  // Typed and left at once, inside the draft's 200 ms before it is saved.
  await box.fill("half-written thought");
  await page.getByRole("button", { name: "First topic", exact: true }).click();
  await expect(page.getByRole("heading", { name: "First topic" })).toBeVisible();
  await page.getByRole("button", { name: "Untitled conversation", exact: true }).click();
  await expect(box).toHaveValue("half-written thought");
});

test("a conversation open in two tabs is continued in one: the other follows it read-only, and taking it over stops the first tab's answer", async ({ page }) => {
  const key = uniqueKey("two-tabs");
  const parts = Array.from({ length: 10 }, (_, i) => ({ type: "text" as const, text: `part${i + 1} ` }));
  await script(key, [say("One."), { content: parts, delayMs: 400 }, say("Three.")]);
  await openChat(page, key);
  await sendMessage(page, "Twice open");
  await answered(page, "One.");
  const other = await page.context().newPage();
  await other.goto("/#/chat");
  await other.getByRole("button", { name: "Twice open", exact: true }).click();
  await expect(messages(other).getByText("One.")).toBeVisible();
  // Read-only here: the message typed in this tab is not sent while the first tab continues it.
  await expect(other.getByRole("status").filter({ hasText: "open in another tab" })).toBeVisible();
  await other.getByRole("textbox", { name: "Message" }).fill("From the second tab");
  await expect(other.getByRole("button", { name: "Send" })).toBeDisabled();
  await other.getByRole("textbox", { name: "Message" }).press("Enter");

  // What the first tab saves, the second follows.
  await sendMessage(page, "Count slowly");
  await expect(messages(other).getByText("Count slowly")).toBeVisible();
  await expect(messages(page).getByText(/part1/)).toBeVisible({ timeout: 90_000 });

  // Taken over mid-answer: the first tab stops its answer, saves it, and turns read-only.
  await other.getByRole("button", { name: "Use it here" }).click();
  await expect(page.getByRole("status").filter({ hasText: "open in another tab" })).toBeVisible();
  await expect(messages(page).getByText("Stopped.")).toBeVisible();
  await expect(messages(other).getByText("Stopped.")).toBeVisible();
  await expect(other.getByRole("button", { name: "Send" })).toBeEnabled();
  await other.getByRole("button", { name: "Send" }).click();
  await answered(other, "Three.");
  await expect(messages(page).getByText("Three.")).toBeVisible();

  const stored = await storedRecords<{ conversationId: string; seq: number; role: string; content: { text?: string }[] }>(page, "messages");
  const conversation = stored.find((message) => message.content.some((block) => block.text === "Twice open"))!.conversationId;
  const saved = stored.filter((message) => message.conversationId === conversation).sort((a, b) => a.seq - b.seq);
  const seqs = saved.map((message) => message.seq);
  expect(new Set(seqs).size).toBe(seqs.length);
  const first = (message: (typeof saved)[number]) => `${message.role}: ${message.content.find((block) => block.text)?.text ?? ""}`;
  expect(saved.map(first)).toEqual([
    "user: Twice open",
    "assistant: One.",
    "user: Count slowly",
    expect.stringMatching(/^assistant: part1/),
    "user: From the second tab",
    "assistant: Three.",
  ]);
  // The stopped answer did not go on once the second tab had it: it never reached its end.
  await page.waitForTimeout(2000);
  expect(JSON.stringify(await storedRecords(page, "messages"))).not.toContain("part10");
  // The tab that continued it closes: the first one continues it again.
  await other.close();
  await expect(page.getByRole("status").filter({ hasText: "open in another tab" })).toHaveCount(0);
  await page.getByRole("textbox", { name: "Message" }).fill("Back in the first tab");
  await expect(page.getByRole("button", { name: "Send" })).toBeEnabled();
});

test("a conversation deleted in one tab while another tab answers in it is gone from both, and nothing of it is written back", async ({ page }) => {
  const key = uniqueKey("delete-elsewhere");
  const parts = Array.from({ length: 10 }, (_, i) => ({ type: "text" as const, text: `part${i + 1} ` }));
  await script(key, [{ content: parts, delayMs: 400 }]);
  await openChat(page, key);
  await sendMessage(page, "Deleted elsewhere");
  await expect(messages(page).getByText(/part1/)).toBeVisible({ timeout: 90_000 });
  const conversation = (await storedMessages(page)).find((m) => m.status !== undefined)!.conversationId;
  const other = await page.context().newPage();
  await other.goto("/#/chat");
  await other.getByRole("button", { name: "Delete Deleted elsewhere" }).click();
  await other.getByRole("group", { name: "Delete Deleted elsewhere?" }).getByRole("button", { name: "Delete", exact: true }).click();
  // The tab that was answering closes it too, and stops.
  await expect(page.getByRole("button", { name: "Deleted elsewhere", exact: true })).toHaveCount(0);
  await expect(other.getByRole("button", { name: "Deleted elsewhere", exact: true })).toHaveCount(0);
  // Long enough for the whole answer to have come, had it gone on.
  await page.waitForTimeout(13_000);
  expect((await storedMessages(page)).filter((m) => m.conversationId === conversation)).toEqual([]);
  const conversations = await storedRecords<{ id: string }>(page, "conversations");
  expect(conversations.map((c) => c.id)).not.toContain(conversation);
  await other.close();
});

test("a conversation deleted just before a reload stays deleted, even when storage had not written the delete yet", async ({ page }) => {
  const key = uniqueKey("delete-reload");
  await script(key, [say("Kept answer."), say("Gone answer.")]);
  await openChat(page, key);
  await sendMessage(page, "Kept topic");
  await expect(messages(page).getByText("Kept answer.")).toBeVisible();
  await page.getByRole("button", { name: "New chat" }).click();
  await sendMessage(page, "Gone topic");
  await expect(messages(page).getByText("Gone answer.")).toBeVisible();
  const titled = async () => (await storedRecords<{ id: string; title: string }>(page, "conversations")).find((c) => c.title === "Gone topic")?.id;
  await expect.poll(titled).toBeDefined();
  const gone = (await titled())!;

  // Another page of the same origin keeps a transaction on the conversations going, so the delete waits behind it.
  const held = await holdStores(page, ["conversations", "messages"]);
  await page.getByRole("button", { name: "Delete Gone topic" }).click();
  await page.getByRole("group", { name: "Delete Gone topic?" }).getByRole("button", { name: "Delete", exact: true }).click();
  await expect(page.getByRole("button", { name: "Gone topic", exact: true })).toHaveCount(0);
  await page.reload();
  await page.waitForTimeout(500);
  // The page that deleted it is gone, and its delete never reached storage.
  expect(await held.keys()).toContain(gone);

  await held.release();
  await expect(page.getByRole("button", { name: "Kept topic", exact: true })).toBeVisible();
  await expect(page.getByRole("button", { name: "Gone topic", exact: true })).toHaveCount(0);
  expect((await storedRecords<{ id: string }>(page, "conversations")).map((c) => c.id)).not.toContain(gone);
  expect((await storedMessages(page)).filter((m) => m.conversationId === gone)).toEqual([]);
});

test("a file uploaded in a conversation's read-only tab is listed in both tabs and reaches the Python of the tab that continues it", async ({ page }) => {
  const key = uniqueKey("two-tabs-files");
  await script(key, [say("One."), call("print('rows:', open('from-other.csv').read().split())"), say("Read it.")]);
  await openChat(page, key);
  await sendMessage(page, "Files in two tabs");
  await answered(page, "One.");
  const other = await page.context().newPage();
  await other.goto("/#/chat");
  await other.getByRole("button", { name: "Files in two tabs", exact: true }).click();
  await expect(other.getByRole("status").filter({ hasText: "open in another tab" })).toBeVisible();

  const chooser = other.waitForEvent("filechooser");
  await other.getByRole("button", { name: "Upload files" }).click();
  await (await chooser).setFiles([{ name: "from-other.csv", mimeType: "text/csv", buffer: Buffer.from("x,y\n3,4\n") }]);
  const listed = (tab: Page) => tab.getByRole("list", { name: "Files" }).getByRole("listitem").filter({ hasText: "from-other.csv" });
  await expect(listed(other)).toBeVisible();
  await expect(listed(page)).toBeVisible();
  await expect(other.getByText(/Uploading/)).toHaveCount(0);
  await sendMessage(page, "Read the file");
  await answered(page, "Read it.");
  await expect(page.getByRole("region", { name: "Python cell" })).toContainText("rows: ['x,y', '3,4']");
  await other.close();
});
