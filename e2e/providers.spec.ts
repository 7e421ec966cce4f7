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
  ]);
  await page.goto("/#/chat");
  await saveSettings(page, { "OpenAI › API key": "sk-test-openai", "OpenAI › Base URL": openaiBase(session) });
  await expect(page.getByRole("combobox", { name: "Model" })).toHaveText("OpenAI · gpt-5");
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
});

test("OpenAI: torch runs on OpenAI's sandbox in a container kept across turns; a file it writes comes back; an expired container is replaced and said so", async ({ page }) => {
  const session = uniqueSession("openai-sandbox");
  const call = (code: string) => ({ output: [{ type: "function_call" as const, name: "python", arguments: JSON.stringify({ code }) }] });
  await scriptResponses(session, [
    call("import torch\nkept = torch.__version__\nopen('report.txt', 'w').write('made on the sandbox')\nprint('torch', kept)"),
    { execute: {} },
    { output: [{ type: "message", text: "Ran it there." }] },
    call("import torch\nprint('still', kept)"),
    { execute: {} },
    { output: [{ type: "message", text: "Still there." }] },
  ]);
  await page.goto("/#/chat");
  await saveSettings(page, { "OpenAI › API key": "sk-test-openai", "OpenAI › Base URL": openaiBase(session) });
  await send(page, "Which torch version is there?");
  await answered(page, "Ran it there.");
  const first = cells(page).first();
  await expect(first.getByRole("note")).toHaveText("Ran on OpenAI's sandbox — torch is not available in the browser");
  await expect(first.locator(".cell-output")).toContainText("torch 2.9.0+cpu");
  await expect(first.locator(".cell-status")).toHaveText(/^ok/);
  await expect(page.getByRole("list", { name: "Files" })).toContainText("report.txt");
  // The model heard where it ran.
  const told = await inputOf(session, 2);
  expect(JSON.stringify(told.input.find((item) => item.type === "function_call_output"))).toContain("Ran on OpenAI's sandbox, not in the browser");

  await send(page, "Is it still there?");
  await answered(page, "Still there.");
  await expect(cells(page).nth(1).locator(".cell-output")).toContainText("still 2.9.0+cpu");
  const containers = await openaiContainers(session);
  expect(containers).toHaveLength(1);

  await expireContainer(containers[0].id);
  await scriptResponses(session, [call("import torch\nprint('fresh', 'kept' in globals())"), { execute: {} }, { output: [{ type: "message", text: "Fresh one." }] }]);
  await send(page, "Once more.");
  await answered(page, "Fresh one.");
  await expect(cells(page).nth(2).locator(".cell-output")).toContainText("fresh False");
  await expect(cells(page).nth(2)).toContainText("had expired, so a new one was started");
  expect(await openaiContainers(session)).toHaveLength(2);
});

type GeminiBody = { contents: { role: string; parts: Record<string, unknown>[] }[] };

test("Gemini: a function call runs in the browser, and its response goes back named, with the call's thought signature", async ({ page }) => {
  const session = uniqueGeminiSession("gemini-chat");
  await scriptGemini(session, [
    { parts: [{ text: "Let me run it." }, { functionCall: { name: "python", args: { code: PLOT } } }], signature: true },
    { parts: [{ text: "The mean is 4.0." }] },
  ]);
  await page.goto("/#/chat");
  await saveSettings(page, { "Gemini › API key": "gemini-test-key", "Gemini › Base URL": geminiBase(session) });
  await expect(page.getByRole("combobox", { name: "Model" })).toHaveText("Gemini · gemini-3-flash");
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
});

test("Gemini: torch runs on Gemini's sandbox, which keeps nothing: the badge and the tool result say so", async ({ page }) => {
  const session = uniqueGeminiSession("gemini-sandbox");
  await scriptGemini(session, [
    { parts: [{ functionCall: { name: "python", args: { code: "import torch\nprint('torch', torch.__version__)" } } }] },
    { execute: {} },
    { parts: [{ text: "Ran on Gemini." }] },
  ]);
  await page.goto("/#/chat");
  await saveSettings(page, { "Gemini › API key": "gemini-test-key", "Gemini › Base URL": geminiBase(session) });
  await send(page, "Which torch version?");
  await answered(page, "Ran on Gemini.");
  const cell = cells(page).first();
  await expect(cell.getByRole("note")).toHaveText("Ran on Gemini's sandbox — torch is not available in the browser");
  await expect(cell.locator(".cell-output")).toContainText("torch 2.9.0+cpu");
  await expect(cell).toContainText("keeps nothing between runs");
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
  await page.getByRole("combobox", { name: "Model" }).selectOption({ label: "OpenAI · gpt-5" });
  await send(page, "Torch on OpenAI.");
  await answered(page, "OpenAI ran it.");
  const second = cells(page).nth(1);
  await expect(second.getByRole("note")).toHaveText("Ran on OpenAI's sandbox — torch is not available in the browser");
  await expect(second).toContainText("earlier sandbox runs were on another provider: this is a new sandbox");
  await expect(second.locator(".cell-output")).toContainText("torch 2.9.0+cpu");
});
