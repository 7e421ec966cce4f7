/**
 * A local model through an OpenAI-compatible server (the stand-in speaks as Ollama and
 * llama.cpp do), and one conversation that moves between Claude and it.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { answered, apiBase, messages, requests, script, sendMessage, uniqueKey } from "./support/chat";
import { configureOpenAI, openaiBase, openaiRequests, scriptOpenAI, uniqueSession } from "./support/openai";
import { saveSettings } from "./support/settings";

const cells = (page: Page) => page.getByRole("region", { name: "Python cell" });
const call = (code: string) => ({ content: [{ type: "tool_call" as const, name: "python", arguments: JSON.stringify({ code }) }] });
const say = (text: string) => ({ content: [{ type: "text" as const, text }] });

type ChatBody = {
  model: string;
  tool_choice?: unknown;
  tools: { type: string; function: { name: string } }[];
  messages: { role: string; content: unknown; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string }[];
};
const bodies = async (session: string) => (await openaiRequests(session)).map((request) => request.body as ChatBody);

async function openLocalChat(page: Page, session: string): Promise<void> {
  await page.goto("/#/chat");
  await saveSettings(page, { "OpenAI-compatible › Base URL": openaiBase(session), "OpenAI-compatible › Model": "llama3.2" });
}

test("a local model's tool call runs in the browser, its answer comes back, and variables persist across turns", async ({ page }) => {
  const session = uniqueSession("local-loop");
  await scriptOpenAI(session, [call("total = sum(range(10))\nprint('total', total)"), say("The total is 45."), call("print(total * 2)"), say("Doubled: 90.")]);
  await openLocalChat(page, session);
  await expect(page.getByRole("combobox", { name: "Model for this conversation" })).toHaveText("OpenAI-compatible · llama3.2");
  await sendMessage(page, "Add the numbers below 10.");
  await answered(page, "The total is 45.");
  await expect(cells(page).first().locator(".cell-output")).toHaveText("total 45");
  await expect(cells(page).first().locator(".cell-status")).toHaveText(/^ok/);
  await expect(messages(page).locator(".answer-author").first()).toHaveText("OpenAI-compatible · llama3.2");
  await sendMessage(page, "Double it.");
  await answered(page, "Doubled: 90.");
  await expect(cells(page).nth(1).locator(".cell-output")).toHaveText("90");

  const sent = await bodies(session);
  expect(sent).toHaveLength(4);
  for (const body of sent) {
    expect(body.model).toBe("llama3.2");
    expect(body.tool_choice).toBeUndefined();
    expect(body.tools.map((tool) => tool.function.name)).toEqual(["python"]);
  }
  // The result answers the call by its id, with what the code printed.
  const asked = sent[1].messages.find((m) => m.role === "assistant" && m.tool_calls)!;
  const result = sent[1].messages.find((m) => m.role === "tool")!;
  expect(result.tool_call_id).toBe(asked.tool_calls![0].id);
  expect(String(result.content)).toContain("total 45");
});

test("a local model still answers when the device is offline; a model on the internet waits, and says so", async ({ page }) => {
  const session = uniqueSession("local-offline");
  await scriptOpenAI(session, [say("Answered without a network.")]);
  await openLocalChat(page, session);
  // The device loses its network, as the browser reports it (the local server, on this machine, still answers).
  await page.evaluate(() => {
    Object.defineProperty(Navigator.prototype, "onLine", { get: () => false, configurable: true });
    window.dispatchEvent(new Event("offline"));
  });
  await expect(page.getByText("You are offline")).toHaveCount(0);
  await sendMessage(page, "Are you there?");
  await answered(page, "Answered without a network.");
  expect(await openaiRequests(session)).toHaveLength(1);

  // The same conversation with a model on the internet: nothing can be sent, and the notice says why.
  const key = uniqueKey("offline-cloud");
  await saveSettings(page, { "Anthropic › API key": key, "Anthropic › Base URL": "https://api.anthropic.example" });
  await page.getByRole("combobox", { name: "Model for this conversation" }).selectOption({ label: "Anthropic · claude-sonnet-5-5" });
  await expect(page.getByText("You are offline: nothing is sent to the model until you are back online")).toBeVisible();
  await page.getByRole("textbox", { name: "Message" }).fill("And now?");
  await expect(page.getByRole("button", { name: "Send" })).toBeDisabled();
});

test("with a local model, a module Pyodide lacks ends unavailable with the reason", async ({ page }) => {
  const session = uniqueSession("local-missing");
  await scriptOpenAI(session, [call("import torch\nprint(torch.__version__)"), say("No torch here.")]);
  await openLocalChat(page, session);
  await sendMessage(page, "Which torch version?");
  await answered(page, "No torch here.");
  await expect(cells(page).locator(".cell-status")).toHaveText(/^unavailable/);
  await expect(cells(page)).toContainText("torch is not available in the browser. OpenAI-compatible servers have no code sandbox");
  const result = (await bodies(session))[1].messages.find((m) => m.role === "tool")!;
  expect(String(result.content)).toMatch(/^status: unavailable/);
  expect(String(result.content)).toContain("no code sandbox");
});

test("a server that does not allow the page (CORS) gets a message that says what it needs, and the message is kept", async ({ page }) => {
  const session = uniqueSession("local-cors");
  await configureOpenAI(session, { cors: false });
  await scriptOpenAI(session, [say("You should never see this.")]);
  await openLocalChat(page, session);
  await sendMessage(page, "Hello from behind CORS");
  await expect(page.getByRole("alert")).toContainText("OLLAMA_ORIGINS=");
  await expect(page.getByRole("alert")).toContainText("Enable CORS");
  await expect(messages(page)).toContainText("Hello from behind CORS");
  await expect(page.getByRole("button", { name: "Send" })).toBeVisible();
  // The browser stopped at the preflight: the request itself never went, and no answer came.
  expect(await bodies(session)).toEqual([]);
  await expect(messages(page)).not.toContainText("You should never see this.");
});

test("a tool call whose arguments are not JSON is reported to the person and the model, and nothing is lost", async ({ page }) => {
  const session = uniqueSession("local-bad-json");
  await scriptOpenAI(session, [
    { content: [{ type: "tool_call", name: "python", arguments: '{"code": "print(1)' }] },
    say("Sorry, here it is properly."),
  ]);
  await openLocalChat(page, session);
  await sendMessage(page, "Print one, please.");
  await answered(page, "Sorry, here it is properly.");
  await expect(messages(page)).toContainText("Print one, please.");
  await expect(cells(page).locator(".cell-status")).toHaveText(/^error/);
  await expect(cells(page)).toContainText('were not valid JSON: {"code": "print(1)');
  const second = (await bodies(session))[1];
  const asked = second.messages.find((m) => m.role === "assistant")!;
  expect(asked.tool_calls![0].function.arguments).toBe('{"code": "print(1)');
  expect(String(second.messages.find((m) => m.role === "tool")!.content)).toContain("not valid JSON");
});

test("an answer that writes Python instead of calling the tool says that nothing ran", async ({ page }) => {
  const session = uniqueSession("local-no-tool");
  await scriptOpenAI(session, [say("Run this:\n\n```python\nprint(sum(range(10)))\n```")]);
  await openLocalChat(page, session);
  await sendMessage(page, "Sum the numbers below 10.");
  await answered(page, "Run this:");
  await expect(messages(page).getByRole("note")).toHaveText(/wrote Python in its answer instead of calling the python tool, so nothing ran/);
  await expect(cells(page)).toHaveCount(0);
});

test("one conversation moves from Claude to a local model and back: Python's variables stay, each provider gets only what it understands", async ({ page }) => {
  const key = uniqueKey("switch");
  const session = uniqueSession("switch");
  await script(key, [
    {
      content: [
        { type: "thinking", thinking: "The person wants 21 kept.", signature: "sig-claude-1" },
        { type: "tool_use", name: "python", input: { code: "shared = 21" } },
      ],
    },
    { content: [{ type: "text", text: "Stored on Claude." }] },
    { content: [{ type: "text", text: "Back on Claude." }] },
  ]);
  await scriptOpenAI(session, [call("print('doubled', shared * 2)"), say("Local says 42.")]);
  await page.goto("/#/chat");
  await saveSettings(page, {
    "Anthropic › API key": key,
    "Anthropic › Base URL": apiBase(),
    "OpenAI-compatible › Base URL": openaiBase(session),
    "OpenAI-compatible › Model": "llama3.2",
  });
  const picker = page.getByRole("combobox", { name: "Model for this conversation" });
  await expect(picker).toHaveValue(/anthropic/);
  await sendMessage(page, "Keep 21.");
  await answered(page, "Stored on Claude.");

  await picker.selectOption({ label: "OpenAI-compatible · llama3.2" });
  await sendMessage(page, "Double it.");
  await answered(page, "Local says 42.");
  await expect(cells(page).nth(1).locator(".cell-output")).toHaveText("doubled 42");

  await picker.selectOption({ label: "Anthropic · claude-sonnet-5-5" });
  await sendMessage(page, "Thanks.");
  await answered(page, "Back on Claude.");
  await expect(messages(page).locator(".answer-author")).toHaveText([
    "Anthropic · claude-sonnet-5-5",
    "Anthropic · claude-sonnet-5-5",
    "OpenAI-compatible · llama3.2",
    "OpenAI-compatible · llama3.2",
    "Anthropic · claude-sonnet-5-5",
  ]);

  // The local server got Claude's turn as plain Chat Completions: its tool call and result, no thinking.
  const local = (await bodies(session))[0];
  const text = JSON.stringify(local);
  expect(text).not.toContain("thinking");
  expect(text).not.toContain("sig-claude-1");
  expect(local.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);
  expect(local.messages[2].tool_calls![0].function).toEqual({ name: "python", arguments: JSON.stringify({ code: "shared = 21" }) });
  expect(local.messages[3].tool_call_id).toBe(local.messages[2].tool_calls![0].id);

  // Claude got its own thinking back, signed, and the local turn as tool_use and tool_result blocks.
  const claude = (await requests(key)).at(-1)!.body as { messages: { role: string; content: { type: string; [field: string]: unknown }[] }[] };
  expect(claude.messages[1].content[0]).toEqual({ type: "thinking", thinking: "The person wants 21 kept.", signature: "sig-claude-1" });
  const types = claude.messages.map((m) => `${m.role}:${m.content.map((b) => b.type).join("+")}`);
  expect(types).toEqual([
    "user:text",
    "assistant:thinking+tool_use",
    "user:tool_result",
    "assistant:text",
    "user:text",
    "assistant:tool_use",
    "user:tool_result",
    "assistant:text",
    "user:text",
  ]);
  const localCall = claude.messages[5].content[0];
  expect(localCall).toMatchObject({ type: "tool_use", name: "python", input: { code: "print('doubled', shared * 2)" } });
  expect(claude.messages[6].content[0]).toMatchObject({ type: "tool_result", tool_use_id: localCall.id });
});
