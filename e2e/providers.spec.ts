/**
 * OpenAI (Responses API) and Gemini, each through its stand-in: chat with the python tool in
 * the browser, and the fall-back to each one's own code sandbox.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "./support/test";
import { answered, apiBase, messages, script, uniqueKey } from "./support/chat";
import { geminiBase, geminiRequests, scriptGemini, uniqueGeminiSession } from "./support/gemini";
import { expireContainer, openaiBase, openaiContainers, openaiResponsesRequests, scriptResponses, uniqueSession } from "./support/openai";
import { saveSettings } from "./support/settings";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==";
const PLOT = `import base64
class Plot:
    def _repr_png_(self): return base64.b64decode("${PNG}")
display(Plot())
print("mean is", sum([2, 4, 6]) / 3)`;

const cells = (page: Page) => page.getByRole("region", { name: "Python cell" });

async function upload(page: Page, name: string, text: string): Promise<void> {
  const chooser = page.waitForEvent("filechooser");
  await page.getByRole("button", { name: "Upload files" }).click();
  await (await chooser).setFiles({ name, mimeType: "text/csv", buffer: Buffer.from(text) });
  await expect(page.getByRole("list", { name: "Files" })).toContainText(name);
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByRole("textbox", { name: "Message" }).fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

type Item = { type?: string; role?: string; call_id?: string; output?: unknown; encrypted_content?: string; content?: unknown };
const inputOf = async (session: string, n: number) =>
  ((await openaiResponsesRequests(session))[n].body as { input: Item[]; store?: boolean; tools: { type: string }[] });

test("OpenAI: a function call runs in the browser; its output and image go back, with the reasoning, and nothing is stored", async ({ page }) => {
  const session = uniqueSession("openai-chat");
  await scriptResponses(session, [
    { output: [{ type: "reasoning", summary: "Compute it in Python." }, { type: "function_call", name: "python", arguments: JSON.stringify({ code: PLOT }) }] },
    { output: [{ type: "message", text: "The mean is 4.0." }] },
    { output: [{ type: "function_call", name: "python", arguments: JSON.stringify({ code: "print('again', Plot.__name__)" }) }] },
    { output: [{ type: "message", text: "Still defined." }] },
  ]);
  await page.goto("/#/chat");
  await saveSettings(page, { "OpenAI › API key": "sk-test-openai", "OpenAI › Base URL": openaiBase(session) });
  await expect(page.getByRole("combobox", { name: "Model for this conversation" })).toHaveText("OpenAI · gpt-5");
  await send(page, "What is the mean of 2, 4 and 6?");
  await answered(page, "The mean is 4.0.");
  await expect(cells(page).locator(".cell-output")).toContainText("mean is 4.0");
  await expect(messages(page).locator(".answer-author").first()).toHaveText("OpenAI · gpt-5");

  const first = await inputOf(session, 0);
  expect(first.store).toBe(false);
  expect(first.tools.map((tool) => tool.type)).toEqual(["function"]);
  const second = await inputOf(session, 1);
  const reasoning = second.input.find((item) => item.type === "reasoning");
  expect(reasoning?.encrypted_content).toBeTruthy();
  const call = second.input.find((item) => item.type === "function_call")!;
  const output = second.input.find((item) => item.type === "function_call_output")!;
  expect(output.call_id).toBe(call.call_id);
  expect(JSON.stringify(output.output)).toContain("mean is 4.0");
  expect(JSON.stringify(output.output)).toContain(`data:image/png;base64,${PNG}`);

  // The browser interpreter keeps its variables across turns.
  await send(page, "Is Plot still there?");
  await answered(page, "Still defined.");
  await expect(cells(page).nth(1).locator(".cell-output")).toHaveText("again Plot");
});

test("OpenAI: torch runs on OpenAI's sandbox in a container kept across turns; a file it writes comes back; an expired container is replaced and said so", async ({ page }) => {
  const session = uniqueSession("openai-sandbox");
  const call = (code: string) => ({ output: [{ type: "function_call" as const, name: "python", arguments: JSON.stringify({ code }) }] });
  await scriptResponses(session, [
    call("import torch, csv\nkept = torch.__version__\nrows = list(csv.reader(open('sales.csv')))\nopen('report.txt', 'w').write(f'{len(rows)} rows seen on the sandbox')\nprint('torch', kept)"),
    { execute: {} },
    call("print(open('report.txt').read())"),
    { output: [{ type: "message", text: "Ran it there." }] },
    call("import torch\nprint('still', kept)"),
    { execute: {} },
    { output: [{ type: "message", text: "Still there." }] },
  ]);
  await page.goto("/#/chat");
  await saveSettings(page, { "OpenAI › API key": "sk-test-openai", "OpenAI › Base URL": openaiBase(session) });
  await upload(page, "sales.csv", "a,1\nb,2\nc,3\n");
  await send(page, "Which torch version is there?");
  await answered(page, "Ran it there.");
  const first = cells(page).first();
  await expect(first.getByRole("note")).toHaveText("Ran on OpenAI's sandbox — torch is not available in the browser");
  await expect(first.locator(".cell-output")).toContainText("torch 2.9.0+cpu");
  await expect(first.locator(".cell-status")).toHaveText(/^ok/);
  await expect(page.getByRole("list", { name: "Files" })).toContainText("report.txt");
  // The file the sandbox wrote, read by the browser's Python.
  await expect(cells(page).nth(1).locator(".cell-output")).toHaveText("3 rows seen on the sandbox");
  await expect(cells(page).nth(1).getByRole("note")).toHaveCount(0);
  // The model heard where it ran.
  const told = await inputOf(session, 2);
  expect(JSON.stringify(told.input.find((item) => item.type === "function_call_output"))).toContain("Ran on OpenAI's sandbox, not in the browser");

  await send(page, "Is it still there?");
  await answered(page, "Still there.");
  await expect(cells(page).nth(2).locator(".cell-output")).toContainText("still 2.9.0+cpu");
  const containers = await openaiContainers(session);
  expect(containers).toHaveLength(1);

  await expireContainer(containers[0].id);
  await scriptResponses(session, [call("import torch\nprint('fresh', 'kept' in globals())"), { execute: {} }, { output: [{ type: "message", text: "Fresh one." }] }]);
  await send(page, "Once more.");
  await answered(page, "Fresh one.");
  await expect(cells(page).nth(3).locator(".cell-output")).toContainText("fresh False");
  await expect(cells(page).nth(3)).toContainText("had expired, so a new one was started");
  expect(await openaiContainers(session)).toHaveLength(2);
});

type GeminiBody = { contents: { role: string; parts: Record<string, unknown>[] }[] };

test("Gemini: a function call runs in the browser, and its response goes back named, with the call's thought signature", async ({ page }) => {
  const session = uniqueGeminiSession("gemini-chat");
  await scriptGemini(session, [
    { parts: [{ text: "Let me run it." }, { functionCall: { name: "python", args: { code: PLOT } } }], signature: true },
    { parts: [{ text: "The mean is 4.0." }] },
    { parts: [{ functionCall: { name: "python", args: { code: "print('again', Plot.__name__)" } } }] },
    { parts: [{ text: "Still defined." }] },
  ]);
  await page.goto("/#/chat");
  await saveSettings(page, { "Gemini › API key": "gemini-test-key", "Gemini › Base URL": geminiBase(session) });
  await expect(page.getByRole("combobox", { name: "Model for this conversation" })).toHaveText("Gemini · gemini-3-flash");
  await send(page, "What is the mean of 2, 4 and 6?");
  await answered(page, "The mean is 4.0.");
  await expect(cells(page).locator(".cell-output")).toContainText("mean is 4.0");

  const [first, second] = (await geminiRequests(session)).map((request) => request.body as GeminiBody);
  expect(first.contents).toHaveLength(1);
  const model = second.contents[1];
  expect(model.role).toBe("model");
  const callPart = model.parts.find((part) => part.functionCall)!;
  expect(callPart.thoughtSignature).toBeTruthy();
  const answer = second.contents[2];
  const response = answer.parts.find((part) => part.functionResponse) as { functionResponse: { name: string; response: { output: string } } };
  expect(response.functionResponse.name).toBe("python");
  expect(response.functionResponse.response.output).toContain("mean is 4.0");
  expect(answer.parts.some((part) => (part.inlineData as { data?: string } | undefined)?.data === PNG)).toBe(true);

  await send(page, "Is Plot still there?");
  await answered(page, "Still defined.");
  await expect(cells(page).nth(1).locator(".cell-output")).toHaveText("again Plot");
});

test("Gemini: torch runs on Gemini's sandbox, which keeps nothing: the badge and the tool result say so", async ({ page }) => {
  const session = uniqueGeminiSession("gemini-sandbox");
  await scriptGemini(session, [
    {
      parts: [
        {
          functionCall: {
            name: "python",
            args: { code: `import torch, csv, base64\nprint('torch', torch.__version__, len(list(csv.reader(open('sales.csv')))), 'rows')\nopen('plot.png', 'wb').write(base64.b64decode("${PNG}"))` },
          },
        },
      ],
    },
    { execute: {} },
    { parts: [{ functionCall: { name: "python", args: { code: "print(open('figure_1.png', 'rb').read()[:4])" } } }] },
    { parts: [{ text: "Ran on Gemini." }] },
  ]);
  await page.goto("/#/chat");
  await saveSettings(page, { "Gemini › API key": "gemini-test-key", "Gemini › Base URL": geminiBase(session) });
  await upload(page, "sales.csv", "a,1\nb,2\nc,3\n");
  await send(page, "Which torch version?");
  await answered(page, "Ran on Gemini.");
  const cell = cells(page).first();
  await expect(cell.getByRole("note")).toHaveText("Ran on Gemini's sandbox — torch is not available in the browser");
  await expect(cell.locator(".cell-output")).toContainText("torch 2.9.0+cpu 3 rows");
  await expect(cell).toContainText("keeps nothing between runs");
  // Its image came back into Files, and the browser's Python reads it.
  await expect(page.getByRole("list", { name: "Files" })).toContainText("figure_1.png");
  await expect(cells(page).nth(1).locator(".cell-output")).toHaveText("b'\\x89PNG'");
  const bodies = (await geminiRequests(session)).map((request) => request.body as GeminiBody & { tools?: unknown[] });
  expect(JSON.stringify(bodies[1].tools)).toContain("codeExecution");
  const result = bodies[2].contents.at(-1)!.parts.find((part) => part.functionResponse);
  expect(JSON.stringify(result)).toContain("Nothing persists there between runs");
});

test("OpenAI's errors: a refused key points to Settings, 429 waits as retry-after says, a dropped stream keeps the message and offers Retry", async ({ page }) => {
  const session = uniqueSession("openai-errors");
  await scriptResponses(session, [
    { status: 401, error: { message: "Incorrect API key provided: sk-test-openai.", type: "invalid_request_error", code: "invalid_api_key" } },
  ]);
  await page.goto("/#/chat");
  await saveSettings(page, { "OpenAI › API key": "sk-test-openai", "OpenAI › Base URL": openaiBase(session) });
  await send(page, "Hello?");
  await expect(page.getByRole("alert")).toContainText("OpenAI's API did not accept the API key. Check it in Settings.");
  await expect(messages(page)).toContainText("Hello?");

  await scriptResponses(session, [
    { status: 429, error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" }, headers: { "retry-after": "1" } },
    { output: [{ type: "message", text: "After the wait." }] },
  ]);
  await page.getByRole("button", { name: "Retry" }).click();
  await expect(page.getByRole("status")).toContainText("Retrying in 1 s");
  await answered(page, "After the wait.");

  await scriptResponses(session, [{ output: [{ type: "message", text: "This answer is cut off before it ends." }], dropAfterEvents: 6 }]);
  await send(page, "Tell me more.");
  await expect(page.getByRole("alert").last()).toContainText("The connection to OpenAI's API was lost");
  await expect(messages(page)).toContainText("Tell me more.");
  await expect(page.getByRole("button", { name: "Retry" })).toBeVisible();
});

test("switching provider mid-conversation starts a new sandbox on the new side, and says so", async ({ page }) => {
  const key = uniqueKey("switch-sandbox");
  const session = uniqueSession("switch-sandbox");
  const torch = "import torch\nprint('torch', torch.__version__)";
  await script(key, [{ content: [{ type: "tool_use", name: "python", input: { code: torch } }] }, { execute: {} }, { content: [{ type: "text", text: "Claude ran it." }] }]);
  await scriptResponses(session, [
    { output: [{ type: "function_call", name: "python", arguments: JSON.stringify({ code: torch }) }] },
    { execute: {} },
    { output: [{ type: "message", text: "OpenAI ran it." }] },
  ]);
  await page.goto("/#/chat");
  await saveSettings(page, {
    "Anthropic › API key": key,
    "Anthropic › Base URL": apiBase(),
    "OpenAI › API key": "sk-test-openai",
    "OpenAI › Base URL": openaiBase(session),
  });
  await send(page, "Torch on Claude.");
  await answered(page, "Claude ran it.");
  await expect(cells(page).first().getByRole("note")).toHaveText("Ran on Anthropic's sandbox — torch is not available in the browser");
  await page.getByRole("combobox", { name: "Model for this conversation" }).selectOption({ label: "OpenAI · gpt-5" });
  await send(page, "Torch on OpenAI.");
  await answered(page, "OpenAI ran it.");
  const second = cells(page).nth(1);
  await expect(second.getByRole("note")).toHaveText("Ran on OpenAI's sandbox — torch is not available in the browser");
  await expect(second).toContainText("earlier sandbox runs were on another provider: this is a new sandbox");
  await expect(second.locator(".cell-output")).toContainText("torch 2.9.0+cpu");
});

test("Gemini's errors: a refused key points to Settings, 429 is retried, a dropped stream keeps the message and offers Retry", async ({ page }) => {
  const session = uniqueGeminiSession("gemini-errors");
  await page.goto("/#/chat");
  await saveSettings(page, { "Gemini › API key": "bad-key", "Gemini › Base URL": geminiBase(session) });
  await send(page, "Hello?");
  await expect(page.getByRole("alert")).toContainText("Gemini's API did not accept the API key. Check it in Settings.");
  await expect(messages(page)).toContainText("Hello?");

  await saveSettings(page, { "Gemini › API key": "gemini-test-key" });
  await scriptGemini(session, [
    { status: 429, error: { code: 429, message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED" } },
    { parts: [{ text: "After the wait." }] },
  ]);
  await page.getByRole("button", { name: "Retry" }).click();
  await expect(page.getByRole("status")).toContainText("Retrying in 1 s");
  await answered(page, "After the wait.");

  await scriptGemini(session, [{ parts: [{ text: "This answer is cut off before it ends, word by word." }], dropAfterChunks: 2, delayMs: 200 }]);
  await send(page, "Tell me more.");
  await expect(page.getByRole("alert").last()).toContainText("lost");
  await expect(messages(page)).toContainText("Tell me more.");
  await expect(page.getByRole("button", { name: "Retry" })).toBeVisible();
});

test("Claude, then GPT, then Gemini in one conversation: browser variables survive, and each request carries only what its provider understands", async ({ page }) => {
  const key = uniqueKey("three");
  const openaiSession = uniqueSession("three");
  const geminiSession = uniqueGeminiSession("three");
  await script(key, [
    { content: [{ type: "thinking", thinking: "Keep it.", signature: "sig-claude-3" }, { type: "tool_use", name: "python", input: { code: "kept = 7" } }] },
    { content: [{ type: "text", text: "Claude kept 7." }] },
  ]);
  await scriptResponses(openaiSession, [
    { output: [{ type: "reasoning", summary: "Double it." }, { type: "function_call", name: "python", arguments: JSON.stringify({ code: "kept *= 2\nprint('gpt', kept)" }) }] },
    { output: [{ type: "message", text: "GPT doubled it." }] },
  ]);
  await scriptGemini(geminiSession, [
    { parts: [{ functionCall: { name: "python", args: { code: "print('gemini', kept + 1)" } } }], signature: true },
    { parts: [{ text: "Gemini added one." }] },
  ]);
  await page.goto("/#/chat");
  await saveSettings(page, {
    "Anthropic › API key": key,
    "Anthropic › Base URL": apiBase(),
    "OpenAI › API key": "sk-test-openai",
    "OpenAI › Base URL": openaiBase(openaiSession),
    "Gemini › API key": "gemini-test-key",
    "Gemini › Base URL": geminiBase(geminiSession),
  });
  const picker = page.getByRole("combobox", { name: "Model for this conversation" });
  await send(page, "Keep 7.");
  await answered(page, "Claude kept 7.");
  await picker.selectOption({ label: "OpenAI · gpt-5" });
  await send(page, "Double it.");
  await answered(page, "GPT doubled it.");
  await picker.selectOption({ label: "Gemini · gemini-3-flash" });
  await send(page, "Add one.");
  await answered(page, "Gemini added one.");
  await expect(cells(page).nth(1).locator(".cell-output")).toHaveText("gpt 14");
  await expect(cells(page).nth(2).locator(".cell-output")).toHaveText("gemini 15");

  const openaiBody = JSON.stringify((await openaiResponsesRequests(openaiSession))[0].body);
  expect(openaiBody).not.toContain("sig-claude-3");
  expect(openaiBody).not.toContain("Keep it.");
  expect(openaiBody).toContain('"type":"function_call"');
  const geminiBodies = (await geminiRequests(geminiSession)).map((request) => JSON.stringify(request.body));
  for (const body of geminiBodies) {
    expect(body).not.toContain("sig-claude-3");
    expect(body).not.toContain("encrypted_content");
    expect(body).not.toContain('"type":"reasoning"');
  }
  expect(geminiBodies[0]).toContain('"functionResponse"');
  // Gemini's own call went back to it with its thought signature.
  expect(geminiBodies[1]).toContain('"thoughtSignature"');
});
