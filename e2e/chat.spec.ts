import { expect, test } from "./support/test";
import { answered, messages, openChat, requests, script, sendMessage, uniqueKey } from "./support/chat";
import { openPlayground } from "./support/playground";
import { holdStores, storedRecords } from "./support/stored";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==";

test("Claude's Python runs in the browser and the result, with its image, goes back", async ({ page }) => {
  const key = uniqueKey("loop");
  await script(key, [
    {
      content: [
        { type: "text", text: "Let me compute that." },
        {
          type: "tool_use",
          name: "python",
          input: {
            code: `import base64
class Plot:
    def _repr_png_(self): return base64.b64decode("${PNG}")
print("mean is", sum([2, 4, 6]) / 3)
display(Plot())`,
          },
        },
      ],
    },
    { content: [{ type: "text", text: "The **mean is 4.0**." }] },
  ]);
  await openChat(page, key);
  await sendMessage(page, "What is the mean of 2, 4 and 6?");
  await answered(page, "The mean is 4.0.");
  const cell = page.getByRole("region", { name: "Python cell" });
  await expect(cell).toContainText("mean is 4.0");
  await expect(cell.locator(".cell-status")).toHaveText(/^ok/);
  await expect(messages(page).getByText("The mean is 4.0.")).toBeVisible();

  const sent = await requests(key);
  expect(sent).toHaveLength(2);
  const body = sent[1].body as { messages: { role: string; content: { type: string; content?: { type: string; text?: string }[] }[] }[] };
  const toolResult = body.messages[2].content.find((block) => block.type === "tool_result");
  expect(toolResult?.content?.find((c) => c.type === "text")?.text).toContain("mean is 4.0");
  expect(toolResult?.content?.some((c) => c.type === "image")).toBe(true);

  // The page runs the conversation's Python and its warm spare, and no Python for a page not opened:
  // two workers, in the one frame that starts the workers without network.
  const frames = page.locator("iframe[title=Python]");
  await expect.poll(() => frames.evaluateAll((all) => all.map((frame) => frame.getAttribute("data-workers"))), { timeout: 30_000 }).toEqual(["2"]);
});

test("variables persist across turns, stay in their conversation, and survive a reload", async ({ page }) => {
  const key = uniqueKey("state");
  const call = (code: string) => ({ content: [{ type: "tool_use" as const, name: "python", input: { code } }] });
  const say = (text: string) => ({ content: [{ type: "text" as const, text }] });
  await script(key, [
    call("secret_number = 1234"),
    say("Stored."),
    call("print(secret_number * 2)"),
    say("Doubled."),
  ]);
  await openChat(page, key);
  await sendMessage(page, "Store a number");
  await answered(page, "Stored.");
  await sendMessage(page, "Double it");
  await answered(page, "Doubled.");
  await expect(page.getByRole("region", { name: "Python cell" }).nth(1)).toContainText("2468");

  // A second conversation has its own interpreter.
  await script(key, [call("print('secret_number' in globals())"), say("Checked.")]);
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page.getByRole("heading", { name: "Untitled conversation" })).toBeVisible();
  await sendMessage(page, "Is it there?");
  await answered(page, "Checked.");
  await expect(page.getByRole("region", { name: "Python cell" })).toContainText("False");

  // After a reload, the first conversation's interpreter comes back.
  await page.reload();
  await script(key, [call("print(secret_number + 1)"), say("Still there.")]);
  await page.getByRole("button", { name: "Store a number", exact: true }).click();
  await expect(page.getByText(/Python state restored: secret_number/)).toBeVisible({ timeout: 90_000 });
  await sendMessage(page, "Is it still there?");
  await answered(page, "Still there.");
  await expect(page.getByRole("region", { name: "Python cell" }).last()).toContainText("1235");
});

test("Stop mid-stream keeps what was streamed and the person's message", async ({ page }) => {
  const key = uniqueKey("stop");
  await script(key, [{ content: [{ type: "text", text: "One two three four five six seven eight nine ten eleven twelve" }], delayMs: 400 }]);
  await openChat(page, key);
  await sendMessage(page, "Count slowly");
  await expect(messages(page).getByText(/One two/)).toBeVisible();
  await page.getByRole("button", { name: "Stop" }).click();
  await expect(messages(page).getByText("Stopped.")).toBeVisible();
  await expect(messages(page).getByText("Count slowly")).toBeVisible();
  await page.reload();
  await expect(messages(page).getByText("Count slowly")).toBeVisible();
  await expect(messages(page).getByText(/One two/)).toBeVisible();
});

test("a bad key points to Settings and keeps the message", async ({ page }) => {
  await openChat(page, "bad-key");
  await sendMessage(page, "Hello there");
  await expect(page.getByRole("alert")).toContainText("The API key was not accepted. Check it in Settings.");
  await expect(page.getByRole("button", { name: "Enter API key" })).toBeVisible();
  await page.reload();
  await expect(messages(page).getByText("Hello there")).toBeVisible();
});

test("a provider's SDK loads with the first request to it, not with the page; one that cannot load says so and keeps the message", async ({ page }) => {
  const SDK = /\/assets\/(anthropic|openai|gemini)-[^/]*\.js$/;
  const loaded: string[] = [];
  page.on("request", (request) => {
    if (SDK.test(new URL(request.url()).pathname)) loaded.push(new URL(request.url()).pathname);
  });
  await openPlayground(page);
  const key = uniqueKey("sdk");
  await script(key, [{ content: [{ type: "text", text: "Here once it loaded." }] }]);
  await openChat(page, key);
  await expect(page.getByRole("textbox", { name: "Message" })).toBeVisible();
  expect(loaded).toEqual([]);

  // The SDK's code cannot be had (the network dropped, or a new version replaced it).
  let refused = 0;
  await page.route(/\/assets\/anthropic-[^/]*\.js$/, (route) => {
    refused++;
    return route.abort("internetdisconnected");
  });
  await sendMessage(page, "Hello SDK");
  await expect(page.getByRole("alert")).toContainText("Could not load the code that talks to this provider. Check the connection, then reload the page.");
  expect(refused).toBeGreaterThan(0);
  expect(loaded.every((path) => path.includes("/anthropic-"))).toBe(true);
  expect(await requests(key)).toHaveLength(0);

  await page.unrouteAll();
  await page.reload();
  await expect(messages(page).getByText("Hello SDK")).toBeVisible();
  await sendMessage(page, "Again");
  await answered(page, "Here once it loaded.");
  expect(await requests(key)).toHaveLength(1);
});

test("an overloaded API (529) is retried visibly, then answers", async ({ page }) => {
  const key = uniqueKey("overloaded");
  await script(key, [
    { status: 529, error: { type: "overloaded_error", message: "Overloaded" } },
    { content: [{ type: "text", text: "Here after a retry." }] },
  ]);
  await openChat(page, key);
  await sendMessage(page, "Are you there?");
  await expect(page.getByText(/overloaded.*Retrying in 1 s/)).toBeVisible();
  await expect(messages(page).getByText("Here after a retry.")).toBeVisible();
  expect(await requests(key)).toHaveLength(2);
});

test("an error event mid-stream keeps the partial answer, and Retry resends", async ({ page }) => {
  const key = uniqueKey("midstream");
  await script(key, [
    { content: [{ type: "text", text: "Partial answer" }, { type: "text", text: "never sent" }], errorAfterBlocks: 1 },
    { content: [{ type: "text", text: "Complete answer." }] },
  ]);
  await openChat(page, key);
  await sendMessage(page, "Tell me");
  await expect(page.getByRole("alert")).toContainText("overloaded");
  await expect(messages(page).getByText("Partial answer")).toBeVisible();
  await page.getByRole("button", { name: "Retry" }).click();
  await expect(messages(page).getByText("Complete answer.")).toBeVisible();
  await expect(messages(page).getByText("Tell me")).toBeVisible();
  const retried = (await requests(key))[1].body as { messages: { role: string }[] };
  expect(retried.messages.map((m) => m.role)).toEqual(["user"]);
});

test("markdown from the model runs no script, handler or javascript: link", async ({ page }) => {
  const key = uniqueKey("markdown");
  await script(key, [
    {
      content: [
        {
          type: "text",
          text: 'Safe text\n\n<script>window.pwned = 1</script>\n\n<img src="x" onerror="window.pwned = 2">\n\n[click me](javascript:window.pwned=3)',
        },
      ],
    },
  ]);
  await openChat(page, key);
  await sendMessage(page, "Say something");
  await expect(messages(page).getByText("Safe text")).toBeVisible();
  const link = page.getByText("click me");
  await expect(link).toBeVisible();
  await link.click();
  expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
  expect(await page.locator(".messages script, .messages [onerror]").count()).toBe(0);
});

test("the conversation exports as a Jupyter notebook (nbformat 4) with code and outputs", async ({ page }) => {
  const key = uniqueKey("export");
  await script(key, [
    { content: [{ type: "tool_use", name: "python", input: { code: "print('exported')\n21 * 2" } }] },
    { content: [{ type: "text", text: "Done." }] },
  ]);
  await openChat(page, key);
  await sendMessage(page, "Compute: 合計");
  await answered(page, "Done.");
  await expect(messages(page).getByText("Done.")).toBeVisible();
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export notebook" }).click();
  const file = await download;
  // Named after the conversation, in its own script.
  expect(file.suggestedFilename()).toBe("Compute-合計.ipynb");
  const notebook = JSON.parse(await (await file.createReadStream()).toArray().then((c) => Buffer.concat(c).toString("utf8")));
  expect(notebook.nbformat).toBe(4);
  const code = notebook.cells.find((cell: { cell_type: string }) => cell.cell_type === "code");
  expect(code.source.join("")).toBe("print('exported')\n21 * 2");
  expect(code.outputs).toEqual([
    { output_type: "stream", name: "stdout", text: ["exported\n"] },
    { output_type: "execute_result", data: { "text/plain": ["42"] }, metadata: {}, execution_count: 1 },
  ]);
});

test("an exported notebook carries Python's HTML and SVG without their scripts, and no JavaScript output", async ({ page }) => {
  const key = uniqueKey("export-rich");
  const code = [
    "class Rich:",
    "    def _repr_mimebundle_(self, include=None, exclude=None):",
    "        return {",
    "            'text/plain': 'Rich()',",
    "            'text/html': '<b>bold</b><script>window.pwned = 1</script><img src=\"x\" onerror=\"window.pwned = 2\">',",
    "            'image/svg+xml': '<svg xmlns=\"http://www.w3.org/2000/svg\"><script>window.pwned = 3</script><circle r=\"5\" onload=\"window.pwned = 4\"/></svg>',",
    "            'application/javascript': 'window.pwned = 5',",
    "        }",
    "Rich()",
  ].join("\n");
  await script(key, [{ content: [{ type: "tool_use", name: "python", input: { code } }] }, { content: [{ type: "text", text: "Shown." }] }]);
  await openChat(page, key);
  await sendMessage(page, "Rich output");
  await answered(page, "Shown.");
  // The attack ran: Python's output, as stored, holds the scripts.
  const stored = JSON.stringify(await storedRecords(page, "messages"));
  expect(stored).toContain("<script>window.pwned = 1</script>");
  expect(stored).toContain("application/javascript");
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export notebook" }).click();
  const notebook = JSON.parse(await (await (await download).createReadStream()).toArray().then((c) => Buffer.concat(c).toString("utf8")));
  const cell = notebook.cells.find((cell: { cell_type: string }) => cell.cell_type === "code");
  const data = cell.outputs[0].data as Record<string, string[]>;
  expect(Object.keys(data).sort()).toEqual(["image/svg+xml", "text/html", "text/plain"]);
  expect(data["text/plain"].join("")).toBe("Rich()");
  const html = data["text/html"].join("");
  const svg = data["image/svg+xml"].join("");
  expect(html).toContain("<b>bold</b>");
  expect(svg).toContain("<circle");
  for (const text of [html, svg]) {
    expect(text).not.toContain("<script");
    expect(text).not.toContain("pwned");
  }
});

test("pause_turn is continued until Claude ends its turn", async ({ page }) => {
  const key = uniqueKey("pause");
  await script(key, [
    { content: [{ type: "text", text: "Working on it." }], stop_reason: "pause_turn" },
    { content: [{ type: "text", text: "Finished after the pause." }] },
  ]);
  await openChat(page, key);
  await sendMessage(page, "Take your time");
  await expect(messages(page).getByText("Finished after the pause.")).toBeVisible();
  await expect(messages(page).getByText("Working on it.")).toBeVisible();
  const second = (await requests(key))[1].body as { messages: { role: string }[] };
  expect(second.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
});

test("New chat opens the new conversation at once, even while storage is slow to save it: what is typed next goes there", async ({ page }) => {
  const key = uniqueKey("new-chat-slow");
  await script(key, [{ content: [{ type: "text", text: "First answer." }] }, { content: [{ type: "text", text: "Second answer." }] }]);
  await openChat(page, key);
  await sendMessage(page, "First topic");
  await expect(messages(page).getByText("First answer.")).toBeVisible();
  const held = await holdStores(page, ["conversations"]);
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page.getByRole("heading", { name: "Untitled conversation" })).toBeVisible();
  await expect(messages(page).getByText("First answer.")).toHaveCount(0);
  // Storage had not saved it yet.
  expect(await held.keys()).toHaveLength(1);
  await sendMessage(page, "Second topic");
  await held.release();
  await expect(messages(page).getByText("Second answer.")).toBeVisible();
  await expect(page.getByRole("heading", { name: "Second topic" })).toBeVisible();
  await expect
    .poll(async () => (await storedRecords<{ title: string }>(page, "conversations")).map((c) => c.title).sort())
    .toEqual(["First topic", "Second topic"]);
  await page.getByRole("button", { name: "First topic", exact: true }).click();
  await expect(messages(page).getByText("First answer.")).toBeVisible();
  await expect(messages(page).getByText("Second topic")).toHaveCount(0);
  await expect(page.getByRole("textbox", { name: "Message" })).toHaveValue("");
});

test("conversations are renamed, switched and deleted after confirmation", async ({ page }) => {
  const key = uniqueKey("sidebar");
  await script(key, [{ content: [{ type: "text", text: "First answer." }] }, { content: [{ type: "text", text: "Second answer." }] }]);
  await openChat(page, key);
  await sendMessage(page, "First topic");
  await expect(messages(page).getByText("First answer.")).toBeVisible();
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page.getByRole("heading", { name: "Untitled conversation" })).toBeVisible();
  await sendMessage(page, "Second topic");
  await expect(messages(page).getByText("Second answer.")).toBeVisible();

  // Escape cancels a rename, and leaving the box (Tab) keeps what was typed; focus goes back to Rename each time.
  const nameBox = page.getByRole("textbox", { name: "Conversation name" });
  await page.getByRole("button", { name: "Rename First topic" }).click();
  await nameBox.fill("Not this name");
  await nameBox.press("Escape");
  await expect(nameBox).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Rename First topic" })).toBeFocused();
  await page.keyboard.press("Enter");
  await nameBox.fill("Tabbed topic");
  await nameBox.press("Tab");
  await expect(nameBox).toHaveCount(0);
  await page.getByRole("button", { name: "Rename Tabbed topic" }).click();
  await nameBox.fill("Renamed topic");
  await nameBox.press("Enter");
  await expect(page.getByRole("button", { name: "Rename Renamed topic" })).toBeFocused();
  await page.getByRole("button", { name: "Renamed topic", exact: true }).click();
  await expect(messages(page).getByText("First answer.")).toBeVisible();

  // Deleting asks first, in the conversation's row: Cancel (or Escape) keeps it, and focus goes back to its Delete button.
  const confirmation = page.getByRole("group", { name: "Delete Renamed topic?" });
  const deleteButton = page.getByRole("button", { name: "Delete Renamed topic" });
  await deleteButton.click();
  await expect(confirmation).toHaveAccessibleDescription("Delete “Renamed topic” and its Python state? This cannot be undone.");
  await confirmation.getByRole("button", { name: "Cancel" }).click();
  await expect(confirmation).toHaveCount(0);
  await expect(deleteButton).toBeFocused();
  await expect(page.getByRole("button", { name: "Renamed topic", exact: true })).toBeVisible();
  await page.keyboard.press("Enter");
  await expect(confirmation.getByRole("button", { name: "Cancel" })).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(confirmation).toHaveCount(0);
  await expect(deleteButton).toBeFocused();
  await expect(page.getByRole("button", { name: "Renamed topic", exact: true })).toBeVisible();
  await deleteButton.click();
  await confirmation.getByRole("button", { name: "Delete", exact: true }).click();
  await expect(page.getByRole("button", { name: "New chat" })).toBeFocused();
  await expect(page.getByRole("button", { name: "Renamed topic", exact: true })).toHaveCount(0);
  await page.reload();
  await expect(page.getByRole("button", { name: "Second topic", exact: true })).toBeVisible();
  await expect(page.getByRole("button", { name: "Renamed topic", exact: true })).toHaveCount(0);
});
