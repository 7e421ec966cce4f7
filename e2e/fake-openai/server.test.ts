import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import OpenAI, { toFile, type APIError } from "openai";
import type { ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type {
  Response as OpenAIResponse,
  ResponseCodeInterpreterToolCall,
  ResponseCreateParamsNonStreaming,
  ResponseFunctionToolCall,
  ResponseInputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
  ResponseStreamEvent,
  Tool,
} from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type ContainerSnapshot, type RecordedRequest, type Reply, type ResponsesReply, type SessionConfig } from "./server.ts";

/** `http://127.0.0.1:<port>/<token>`; a session's base URL is `${url}/<session>/v1`. */
let url = "";
let token = "";
let close: () => Promise<void> = async () => {};

beforeAll(async () => {
  ({ url, token, close } = await startFakeOpenAI()); // a free port and a fresh token
});
afterAll(() => close());

let sessionCount = 0;
/** A fresh session, so each test has a queue, a request log and a configuration of its own. */
const freshSession = () => `test-session-${++sessionCount}`;
const client = (session: string, apiKey = "none") => new OpenAI({ baseURL: `${url}/${session}/v1`, apiKey, maxRetries: 0 });

async function control(route: string, body: unknown): Promise<void> {
  const res = await fetch(`${url}/__kiln/${route}`, { method: "POST", body: JSON.stringify(body) });
  expect(res.status).toBe(200);
}
const script = (session: string, replies: Reply[]) => control("script", { session, replies });
const configure = (session: string, config: SessionConfig) => control("configure", { session, ...config });
async function requests(session: string): Promise<RecordedRequest[]> {
  return (await fetch(`${url}/__kiln/requests?session=${encodeURIComponent(session)}`)).json() as Promise<RecordedRequest[]>;
}

const hello: ChatCompletionCreateParamsNonStreaming = { model: "llama3.2", messages: [{ role: "user", content: "Hello" }] };
const pythonTool = {
  type: "function" as const,
  function: { name: "python", description: "Run Python", parameters: { type: "object", properties: { code: { type: "string" } }, required: ["code"] } },
};

/** Every chunk of a streamed completion. */
async function chunksOf(api: OpenAI, params: Omit<ChatCompletionCreateParamsNonStreaming, "stream">) {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of await api.chat.completions.create({ ...params, stream: true })) chunks.push(chunk);
  return chunks;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The raw SSE text of a streamed completion. */
async function rawStream(session: string, params: object): Promise<string> {
  const res = await fetch(`${url}/${session}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...params, stream: true }) });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  return res.text();
}

describe("fake OpenAI-compatible server", () => {
  it("streams a scripted text in small content deltas, the first one the role", async () => {
    const session = freshSession();
    await script(session, [{ content: [{ type: "text", text: "Hello there, from the fake server!" }] }]);
    const chunks = await chunksOf(client(session), hello);
    expect(chunks[0]).toMatchObject({ object: "chat.completion.chunk", model: "llama3.2", choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
    expect(chunks[0].id).toMatch(/^chatcmpl-/);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(Math.abs(chunks[0].created - Date.now() / 1000)).toBeLessThan(60);
    const texts = chunks.flatMap((chunk) => (chunk.choices[0]?.delta.content ? [chunk.choices[0].delta.content] : []));
    expect(texts.length).toBeGreaterThan(2);
    expect(texts.join("")).toBe("Hello there, from the fake server!");
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([{ index: 0, delta: {}, finish_reason: "stop" }]);
    expect(chunks.slice(0, -1).every((chunk) => chunk.choices[0].finish_reason === null)).toBe(true);
  });

  it("sends data-only SSE events and ends with [DONE]; with include_usage, a usage chunk without choices comes last", async () => {
    const session = freshSession();
    await script(session, [{ content: [{ type: "text", text: "Counted." }] }, { content: [{ type: "text", text: "Plain." }] }]);
    const raw = await rawStream(session, { ...hello, stream_options: { include_usage: true } });
    expect(raw).not.toContain("event:");
    const events = raw.split("\n\n").filter(Boolean);
    expect(events.every((event) => event.startsWith("data: ") && !event.slice(6).includes("\n"))).toBe(true);
    expect(events[events.length - 1]).toBe("data: [DONE]");
    expect(raw.endsWith("data: [DONE]\n\n")).toBe(true);
    const usage = JSON.parse(events[events.length - 2].slice(6)) as ChatCompletionChunk;
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toEqual({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) });
    expect(usage.usage!.total_tokens).toBe(usage.usage!.prompt_tokens + usage.usage!.completion_tokens);
    expect(JSON.parse(events[events.length - 3].slice(6))).toMatchObject({ choices: [{ delta: {}, finish_reason: "stop" }] });

    // Without include_usage: no usage chunk.
    const plain = (await rawStream(session, hello)).split("\n\n").filter(Boolean);
    expect(JSON.parse(plain[plain.length - 2].slice(6))).toMatchObject({ choices: [{ finish_reason: "stop" }] });
    expect(plain.some((event) => event.includes('"usage"'))).toBe(false);
  });

  it("streams tool calls: a header with id and name, then the arguments in pieces split inside the JSON", async () => {
    const session = freshSession();
    const args = JSON.stringify({ code: "total = sum(range(10))\nprint('total', total)", note: "ünïcode ✓" });
    await script(session, [
      {
        content: [
          { type: "text", text: "Running it." },
          { type: "tool_call", name: "python", arguments: args },
          { type: "tool_call", name: "python", arguments: '{"code": "print(1)', id: "call_given" },
        ],
      },
    ]);
    const chunks = await chunksOf(client(session), { ...hello, tools: [pythonTool] });
    const parts = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    // Each call's first delta: index, id, type and name, with empty arguments; then pieces with only the index.
    const headers = parts.filter((part) => part.id);
    expect(headers).toEqual([
      { index: 0, id: expect.stringMatching(/^call_[a-z0-9]+$/), type: "function", function: { name: "python", arguments: "" } },
      { index: 1, id: "call_given", type: "function", function: { name: "python", arguments: "" } },
    ]);
    const pieces = parts.filter((part) => !part.id);
    expect(pieces.every((part) => Object.keys(part).sort().join() === "function,index" && Object.keys(part.function!).join() === "arguments")).toBe(true);
    expect(pieces.filter((part) => part.index === 0).length).toBeGreaterThan(2);
    expect(pieces.some((part) => !isJson(part.function!.arguments!))).toBe(true); // split inside the JSON

    // Assembled by index, as a client does.
    const calls: { id: string; name: string; arguments: string }[] = [];
    for (const part of parts) {
      const call = (calls[part.index] ??= { id: "", name: "", arguments: "" });
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
    }
    expect(calls).toEqual([
      { id: headers[0].id, name: "python", arguments: args },
      { id: "call_given", name: "python", arguments: '{"code": "print(1)' }, // invalid JSON, sent as scripted
    ]);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("Running it.");
    expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe("tool_calls");
  });

  it("answers without a stream as one chat.completion, and with a default reply when nothing is scripted", async () => {
    const session = freshSession();
    await script(session, [{ content: [{ type: "tool_call", name: "python", arguments: '{"code":"1"}', id: "call_x" }], finish_reason: "length" }]);
    const completion = await client(session).chat.completions.create({ ...hello, tools: [pythonTool] });
    expect(completion).toMatchObject({
      object: "chat.completion",
      model: "llama3.2",
      choices: [{ index: 0, message: { role: "assistant", content: "", tool_calls: [{ id: "call_x", type: "function", function: { name: "python", arguments: '{"code":"1"}' } }] }, finish_reason: "length" }],
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) },
    });
    const empty = await client(session).chat.completions.create(hello);
    expect(empty.choices[0]).toEqual({ index: 0, message: { role: "assistant", content: "(no scripted reply)" }, finish_reason: "stop" });
  });

  it("refuses a tool message that answers an unknown id, and a tool call left unanswered, keeping the reply queued", async () => {
    const session = freshSession();
    const api = client(session);
    await script(session, [{ content: [{ type: "text", text: "Kept for the valid request." }] }]);
    const asked: ChatCompletionMessageParam = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_a", type: "function", function: { name: "python", arguments: "{}" } }],
    };
    const stray = await api.chat.completions
      .create({ ...hello, messages: [{ role: "user", content: "Run it" }, asked, { role: "tool", tool_call_id: "call_b", content: "4" }] })
      .catch((error: unknown) => error);
    expect(stray).toBeInstanceOf(OpenAI.BadRequestError);
    expect(stray).toMatchObject({ status: 400, type: "invalid_request_error", message: expect.stringContaining("call_b") });

    const orphan = api.chat.completions.create({ ...hello, messages: [{ role: "user", content: "Hi" }, { role: "tool", tool_call_id: "call_a", content: "4" }] });
    await expect(orphan).rejects.toMatchObject({ status: 400, message: expect.stringContaining("must be a response to a preceeding message with 'tool_calls'") });

    const unanswered = await api.chat.completions
      .create({ ...hello, messages: [{ role: "user", content: "Run it" }, asked, { role: "user", content: "and?" }] })
      .catch((error: unknown) => error);
    expect(unanswered).toBeInstanceOf(OpenAI.BadRequestError);
    expect((unanswered as APIError).message).toContain("The following tool_call_ids did not have response messages: call_a");
    expect((unanswered as APIError).param).toBe("messages.[1].role");

    // Other shapes the real API refuses.
    const refused: [string, object][] = [
      ["no model", { ...hello, model: "" }],
      ["no messages", { ...hello, messages: [] }],
      ["a bad role", { ...hello, messages: [{ role: "robot", content: "Hi" }] }],
      ["a number as content", { ...hello, messages: [{ role: "user", content: 4 }] }],
      ["an image in a tool message", { ...hello, messages: [{ role: "user", content: "Run" }, asked, { role: "tool", tool_call_id: "call_a", content: [{ type: "image_url", image_url: { url: "data:," } }] }] }],
      ["object arguments", { ...hello, messages: [{ role: "user", content: "Run" }, { ...asked, tool_calls: [{ id: "call_a", type: "function", function: { name: "python", arguments: {} } }] }, { role: "tool", tool_call_id: "call_a", content: "4" }] }],
      ["a tool call without id", { ...hello, messages: [{ role: "user", content: "Run" }, { ...asked, tool_calls: [{ type: "function", function: { name: "python", arguments: "{}" } }] }] }],
      ["a tool without parameters", { ...hello, tools: [{ type: "function", function: { name: "python" } }] }],
      ["a tool of another type", { ...hello, tools: [{ type: "code_interpreter" }] }],
      ["stream_options without stream", { ...hello, stream_options: { include_usage: true } }],
    ];
    for (const [what, body] of refused) {
      const failure = await api.chat.completions.create(body as ChatCompletionCreateParamsNonStreaming).catch((error: unknown) => error);
      expect(failure, what).toBeInstanceOf(OpenAI.BadRequestError);
    }

    // Answered, with text and image parts, the queued reply is still first.
    const valid = await api.chat.completions.create({
      ...hello,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "Run it" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
        asked,
        { role: "tool", tool_call_id: "call_a", content: [{ type: "text", text: "4" }] },
      ],
    });
    expect(valid.choices[0].message.content).toBe("Kept for the valid request.");
    expect(await requests(session)).toHaveLength(3 + refused.length + 1);
  });

  it("lists the session's models", async () => {
    const session = freshSession();
    const page = await client(session).models.list();
    expect(page.data).toEqual([
      { id: "llama3.2", object: "model", created: expect.any(Number), owned_by: "library" },
      { id: "qwen2.5-coder:7b", object: "model", created: expect.any(Number), owned_by: "library" },
    ]);
    await configure(session, { models: ["phi4-mini"] });
    expect((await client(session).models.list()).data.map((model) => model.id)).toEqual(["phi4-mini"]);
    expect((await client(freshSession()).models.list()).data).toHaveLength(2); // other sessions keep the default
    expect(await client(session).models.retrieve("phi4-mini")).toMatchObject({ id: "phi4-mini", object: "model" });
    await expect(client(session).models.retrieve("llama3.2")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("plays scripted HTTP errors with OpenAI error bodies and headers", async () => {
    const session = freshSession();
    await script(session, [
      { status: 429, error: { message: "Slow down", code: "rate_limit_exceeded" }, headers: { "retry-after": "0" } },
      { status: 503, error: { message: "server busy, please try again.", type: "api_error" } },
    ]);
    const limited = await client(session).chat.completions.create(hello).catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited).toMatchObject({ status: 429, code: "rate_limit_exceeded", type: "invalid_request_error" });
    expect((limited as APIError).headers?.get("retry-after")).toBe("0");
    await expect(chunksOf(client(session), hello)).rejects.toMatchObject({ status: 503, type: "api_error", message: "503 server busy, please try again." });
  });

  it("ends the stream early with dropAfterChunks: no finish_reason and no [DONE]", async () => {
    const session = freshSession();
    await script(session, [
      { content: [{ type: "text", text: "one two three four five" }], dropAfterChunks: 3, delayMs: 5 },
      { content: [{ type: "text", text: "never" }], dropAfterChunks: 0 },
    ]);
    const seen: ChatCompletionChunk[] = [];
    const failure = await (async () => {
      for await (const chunk of await client(session).chat.completions.create({ ...hello, stream: true })) seen.push(chunk);
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(seen).toHaveLength(3); // the role chunk and two words
    expect(seen.map((chunk) => chunk.choices[0].delta.content).join("")).toBe("one two");
    expect(seen.every((chunk) => chunk.choices[0].finish_reason === null)).toBe(true);
    await expect(client(session).chat.completions.create(hello)).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
  });

  it("takes no key by default, and answers a session that requires one with a 401 without it", async () => {
    const session = freshSession();
    await configure(session, { requireKey: "sk-local-secret" });
    const failure = await client(session).chat.completions.create(hello).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(failure).toMatchObject({ status: 401, type: "invalid_request_error", code: "invalid_api_key", param: null });
    await expect(client(session).models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const raw = await fetch(`${url}/${session}/v1/models`);
    expect(raw.status).toBe(401);
    expect(await raw.json()).toEqual({ error: { message: expect.stringContaining("didn't provide an API key"), type: "invalid_request_error", param: null, code: "invalid_api_key" } });

    const completion = await client(session, "sk-local-secret").chat.completions.create(hello);
    expect(completion.choices[0].message.content).toBe("(no scripted reply)");
    expect((await requests(session)).map((request) => request.headers.authorization)).toEqual(["Bearer none", "Bearer sk-local-secret"]);
    await configure(session, { requireKey: null });
    expect((await client(session).models.list()).data).toHaveLength(2);
  });

  it("records each session's requests apart, and resets a session", async () => {
    const [first, second] = [freshSession(), freshSession()];
    await script(first, [{ content: [{ type: "text", text: "for the first" }] }]);
    const reply = await client(second).chat.completions.create(hello);
    expect(reply.choices[0].message.content).toBe("(no scripted reply)");
    const streamed = { ...hello, max_tokens: 5, stream: true, stream_options: { include_usage: true } };
    await chunksOf(client(first), { ...hello, max_tokens: 5, stream_options: { include_usage: true } });
    expect((await requests(first)).map((request) => request.body)).toEqual([streamed]);
    expect((await requests(second)).map((request) => request.body)).toEqual([hello]);
    expect(await requests(freshSession())).toEqual([]);

    await configure(first, { models: ["x"], cors: false });
    await control("reset", { session: first });
    expect(await requests(first)).toEqual([]);
    expect((await client(first).models.list()).data).toHaveLength(2);
    const bad = await fetch(`${url}/__kiln/script`, { method: "POST", body: JSON.stringify({ session: "no/slash", replies: [] }) });
    expect(bad.status).toBe(400);
  });

  it("sends CORS headers and answers preflights; a session with cors: false sends none", async () => {
    const session = freshSession();
    const preflight = { origin: "http://localhost:4173", "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type, x-stainless-os" };
    const allowed = await fetch(`${url}/${session}/v1/chat/completions`, { method: "OPTIONS", headers: preflight });
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("*");
    expect(allowed.headers.get("access-control-allow-methods")).toContain("POST");
    expect(allowed.headers.get("access-control-allow-headers")).toBe("authorization, content-type, x-stainless-os");
    expect(allowed.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
    const models = await fetch(`${url}/${session}/v1/models`, { headers: { origin: "http://localhost:4173" } });
    expect(models.headers.get("access-control-allow-origin")).toBe("*");
    expect(models.headers.get("cross-origin-resource-policy")).toBe("cross-origin");

    await configure(session, { cors: false });
    const blocked = await fetch(`${url}/${session}/v1/chat/completions`, { method: "OPTIONS", headers: preflight });
    expect(blocked.status).toBe(204);
    const plain = await fetch(`${url}/${session}/v1/chat/completions`, { method: "POST", headers: { origin: "http://localhost:4173" }, body: JSON.stringify(hello) });
    expect(plain.status).toBe(200);
    for (const res of [blocked, plain, await fetch(`${url}/${session}/v1/models`, { headers: { origin: "http://localhost:4173" } })]) {
      const names = [...res.headers.keys()];
      expect(names.filter((name) => name.startsWith("access-control-") || name === "cross-origin-resource-policy")).toEqual([]);
    }
    // Another session still allows the page.
    const other = await fetch(`${url}/${freshSession()}/v1/models`, { headers: { origin: "http://localhost:4173" } });
    expect(other.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("fake OpenAI-compatible server: only its test run's token gets in", () => {
  const origin = () => new URL(url).origin;
  /** A token of the same length that differs in its last character. */
  const wrongToken = () => token.slice(0, -1) + (token.endsWith("0") ? "1" : "0");
  const notFound = { error: { message: expect.any(String), type: "invalid_request_error", param: null, code: null } };

  it("listens on a port the OS picked, under a fresh random token, and takes a given one", async () => {
    expect(token).toMatch(/^[0-9a-f]{32}$/);
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/${token}$`));
    const given = "given-token_0123456789";
    const other = await startFakeOpenAI({ token: given });
    try {
      expect(other.url.endsWith(`/${given}`)).toBe(true);
      expect(new URL(other.url).port).not.toBe(new URL(url).port);
      expect((await fetch(`${other.url}/s/v1/models`)).status).toBe(200);
      expect((await fetch(`${new URL(other.url).origin}/${token}/s/v1/models`)).status).toBe(404);
    } finally {
      await other.close();
    }
    await expect(startFakeOpenAI({ token: "short" })).rejects.toThrow(/token/);
    await expect(startFakeOpenAI({ token: "../../0123456789abcdef" })).rejects.toThrow(/token/);
  });

  it("answers a request without the token, or with a wrong one, with a 404 that a browser can read, recording nothing", async () => {
    const session = freshSession();
    await script(session, [{ content: [{ type: "text", text: "still queued" }] }]);
    const bases = [origin(), `${origin()}/${wrongToken()}`, `${origin()}/${token.toUpperCase()}`, `${origin()}/${token}0`, `${origin()}/x/${token}`];
    for (const base of bases) {
      const res = await fetch(`${base}/${session}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(hello) });
      expect(res.status, base).toBe(404);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(await res.json()).toEqual(notFound);
      expect((await fetch(`${base}/${session}/v1/models`)).status, base).toBe(404);
      const preflight = await fetch(`${base}/${session}/v1/chat/completions`, { method: "OPTIONS", headers: { origin: "http://localhost:4173", "access-control-request-method": "POST" } });
      expect(preflight.status, base).toBe(404);
      expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    }
    // The control routes are behind the token too.
    expect((await fetch(`${origin()}/__kiln/requests?session=${session}`)).status).toBe(404);
    expect((await fetch(`${origin()}/__kiln/script`, { method: "POST", body: JSON.stringify({ session, replies: [] }) })).status).toBe(404);
    expect(await requests(session)).toEqual([]);
    const completion = await client(session).chat.completions.create(hello);
    expect(completion.choices[0].message.content).toBe("still queued");
  });
});

// Responses API and Containers API ------------------------------------------------------------------------------

const scriptResponses = (session: string, replies: ResponsesReply[]) => control("script-responses", { session, replies });
async function responsesRequests(session: string): Promise<RecordedRequest[]> {
  return (await fetch(`${url}/__kiln/responses-requests?session=${encodeURIComponent(session)}`)).json() as Promise<RecordedRequest[]>;
}
async function containersOf(session: string): Promise<ContainerSnapshot[]> {
  return (await fetch(`${url}/__kiln/containers?session=${encodeURIComponent(session)}`)).json() as Promise<ContainerSnapshot[]>;
}

const ask = { model: "gpt-5", input: "Hello" };
const pythonFunction: Tool = {
  type: "function",
  name: "python",
  description: "Run Python",
  parameters: { type: "object", properties: { code: { type: "string" } }, required: ["code"], additionalProperties: false },
  strict: true,
};
const interpreter = (container: string | { type: "auto" }): Tool => ({ type: "code_interpreter", container });

/** Every event of a streamed response. */
async function eventsOf(api: OpenAI, params: Omit<ResponseCreateParamsNonStreaming, "stream">): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  for await (const event of await api.responses.create({ ...params, stream: true })) events.push(event);
  return events;
}
const ofType = <T extends ResponseStreamEvent["type"]>(events: ResponseStreamEvent[], type: T) =>
  events.filter((event): event is Extract<ResponseStreamEvent, { type: T }> => event.type === type);
const completedOf = (events: ResponseStreamEvent[]) => ofType(events, "response.completed")[0].response;

/** The raw SSE of a streamed response: `event:` name and parsed `data:` per event. */
async function rawResponseStream(session: string, params: object): Promise<{ event: string; data: { type: string; sequence_number: number } & Record<string, unknown> }[]> {
  const res = await fetch(`${url}/${session}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...params, stream: true }) });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const text = await res.text();
  expect(text).not.toContain("[DONE]");
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const [eventLine, dataLine, ...rest] = block.split("\n");
      expect(rest).toEqual([]);
      expect(eventLine.startsWith("event: ") && dataLine.startsWith("data: ")).toBe(true);
      return { event: eventLine.slice(7), data: JSON.parse(dataLine.slice(6)) };
    });
}

async function failure(promise: Promise<unknown>): Promise<APIError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as APIError;
}

describe("fake OpenAI server: the Responses API", () => {
  it("streams a scripted text as the Responses API does: named events in order, numbered, ending with response.completed", async () => {
    const session = freshSession();
    await scriptResponses(session, [{ output: [{ type: "message", text: "Hello there, from the fake server!" }] }]);
    const raw = await rawResponseStream(session, ask);
    expect(raw.every(({ event, data }) => event === data.type)).toBe(true);
    expect(raw.map(({ data }) => data.sequence_number)).toEqual(raw.map((_, n) => n));
    const types = raw.map(({ event }) => event);
    const deltas = types.filter((type) => type === "response.output_text.delta").length;
    expect(deltas).toBeGreaterThan(2);
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      ...Array<string>(deltas).fill("response.output_text.delta"),
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const created = raw[0].data.response as OpenAIResponse;
    expect(created).toMatchObject({ object: "response", status: "in_progress", output: [], usage: null, model: "gpt-5" });
    expect(created.id).toMatch(/^resp_[0-9a-f]{48}$/);
    const added = raw[2].data as unknown as { output_index: number; item: ResponseOutputMessage };
    expect(added).toMatchObject({ output_index: 0, item: { type: "message", status: "in_progress", role: "assistant", content: [] } });
    expect(added.item.id).toMatch(/^msg_/);
    const deltaEvents = raw.filter(({ event }) => event === "response.output_text.delta").map(({ data }) => data);
    expect(deltaEvents.every((event) => event.item_id === added.item.id && event.output_index === 0 && event.content_index === 0 && typeof event.obfuscation === "string")).toBe(true);
    expect(deltaEvents.map((event) => event.delta).join("")).toBe("Hello there, from the fake server!");

    const completed = raw[raw.length - 1].data.response as OpenAIResponse;
    expect(completed).toMatchObject({ id: created.id, object: "response", status: "completed", model: "gpt-5" });
    expect(completed.output).toEqual([
      {
        id: added.item.id,
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Hello there, from the fake server!", annotations: [], logprobs: [] }],
      },
    ]);
    expect(completed.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
    expect(completed.usage!.total_tokens).toBe(completed.usage!.input_tokens + completed.usage!.output_tokens);

    // The SDK's own stream helper accepts the events and assembles the same response.
    await scriptResponses(session, [{ output: [{ type: "message", text: "Assembled by the SDK." }] }]);
    const final = await client(session).responses.stream({ ...ask, stream_options: { include_obfuscation: false } }).finalResponse();
    expect(final.output_text).toBe("Assembled by the SDK.");
    expect(await responsesRequests(session)).toHaveLength(2);
    expect(await requests(session)).toEqual([]); // the chat completions log stays apart
  });

  it("streams a function call whose arguments arrive in pieces split inside the JSON, and takes its output back", async () => {
    const session = freshSession();
    const args = JSON.stringify({ code: "total = sum(range(10))\nprint('total', total)", note: "ünïcode ✓" });
    await scriptResponses(session, [
      {
        output: [
          { type: "message", text: "Running it." },
          { type: "function_call", name: "python", arguments: args },
          { type: "function_call", name: "python", arguments: '{"code": "print(1)', call_id: "call_given" },
        ],
      },
      { output: [{ type: "message", text: "It printed 45." }] },
    ]);
    const api = client(session);
    const events = await eventsOf(api, { ...ask, tools: [pythonFunction] });
    const added = ofType(events, "response.output_item.added").map((event) => event.item).filter((item): item is ResponseFunctionToolCall => item.type === "function_call");
    expect(added).toEqual([
      { id: expect.stringMatching(/^fc_/), type: "function_call", status: "in_progress", arguments: "", call_id: expect.stringMatching(/^call_/), name: "python" },
      { id: expect.stringMatching(/^fc_/), type: "function_call", status: "in_progress", arguments: "", call_id: "call_given", name: "python" },
    ]);
    // Assembled from the deltas by item id, as a client does.
    const assembled = new Map<string, string>();
    const deltas = ofType(events, "response.function_call_arguments.delta");
    for (const delta of deltas) assembled.set(delta.item_id, (assembled.get(delta.item_id) ?? "") + delta.delta);
    expect(deltas.filter((delta) => delta.item_id === added[0].id).length).toBeGreaterThan(2);
    expect(deltas.some((delta) => !isJson(delta.delta))).toBe(true);
    expect(assembled.get(added[0].id!)).toBe(args);
    expect(assembled.get(added[1].id!)).toBe('{"code": "print(1)'); // invalid JSON, sent as scripted
    expect(ofType(events, "response.function_call_arguments.done").map((event) => event.arguments)).toEqual([args, '{"code": "print(1)']);
    const response = completedOf(events);
    expect(response.output.map((item) => item.type)).toEqual(["message", "function_call", "function_call"]);
    expect(response.output[1]).toMatchObject({ status: "completed", arguments: args, call_id: added[0].call_id });
    expect(response.tools).toEqual([{ ...pythonFunction }]);

    // The calls and their outputs go back in the input.
    const input: ResponseInputItem[] = [
      { role: "user", content: "Hello" },
      ...response.output.map((item) => item as ResponseInputItem),
      { type: "function_call_output", call_id: added[0].call_id, output: "total 45" },
      { type: "function_call_output", call_id: "call_given", output: [{ type: "input_text", text: "SyntaxError" }] },
    ];
    const next = await api.responses.create({ ...ask, input, tools: [pythonFunction] });
    expect(next.output_text).toBe("It printed 45.");
  });

  it("answers without a stream as one response object, with a default reply when nothing is scripted", async () => {
    const session = freshSession();
    await scriptResponses(session, [{ output: [{ type: "function_call", name: "python", arguments: '{"code":"1"}', call_id: "call_x" }] }]);
    const api = client(session);
    const response = await api.responses.create({ ...ask, tools: [pythonFunction], instructions: "Be brief.", temperature: 0.2 });
    expect(response).toMatchObject({
      object: "response",
      status: "completed",
      model: "gpt-5",
      instructions: "Be brief.",
      temperature: 0.2,
      error: null,
      output: [{ type: "function_call", status: "completed", name: "python", arguments: '{"code":"1"}', call_id: "call_x" }],
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number), total_tokens: expect.any(Number) },
    });
    const empty = await api.responses.create(ask);
    expect(empty.output_text).toBe("(no scripted reply)");
    expect((await responsesRequests(session)).map((request) => request.body)).toEqual([{ ...ask, tools: [pythonFunction], instructions: "Be brief.", temperature: 0.2 }, ask]);
  });

  it("refuses an orphan function_call_output, an unanswered call and other shapes the real API refuses, keeping the reply queued", async () => {
    const session = freshSession();
    const api = client(session);
    await scriptResponses(session, [{ output: [{ type: "message", text: "Kept for the valid request." }] }]);
    const call: ResponseInputItem = { type: "function_call", call_id: "call_a", name: "python", arguments: "{}" };

    const orphan = await failure(api.responses.create({ ...ask, input: [{ role: "user", content: "Run it" }, { type: "function_call_output", call_id: "call_b", output: "4" }] }));
    expect(orphan).toBeInstanceOf(OpenAI.BadRequestError);
    expect(orphan).toMatchObject({ status: 400, type: "invalid_request_error", param: "input", code: null });
    expect(orphan.message).toBe("400 No tool call found for function call output with call_id call_b.");
    const unanswered = await failure(api.responses.create({ ...ask, input: [{ role: "user", content: "Run it" }, call, { role: "user", content: "and?" }] }));
    expect(unanswered.message).toBe("400 No tool output found for function call call_a.");

    const notStrict = await failure(
      api.responses.create({ ...ask, tools: [{ ...pythonFunction, parameters: { type: "object", properties: { code: { type: "string" }, note: { type: "string" } }, required: ["code"], additionalProperties: false } }] }),
    );
    expect(notStrict).toMatchObject({ status: 400, param: "tools[0].parameters", code: "invalid_function_parameters" });
    expect(notStrict.message).toContain("Invalid schema for function 'python': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'note'.");
    const open = await failure(api.responses.create({ ...ask, tools: [{ ...pythonFunction, parameters: { type: "object", properties: { code: { type: "string" } }, required: ["code"] } }] }));
    expect(open.message).toContain("'additionalProperties' is required to be supplied and to be false.");
    const svg = await failure(api.responses.create({ ...ask, input: [{ role: "user", content: [{ type: "input_image", image_url: "data:image/svg+xml;base64,PHN2Zz4=", detail: "auto" }] }] }));
    expect(svg).toMatchObject({ param: "input[0].content[0].image_url", code: "invalid_value" });
    expect(svg.message).toContain("unsupported MIME type 'image/svg+xml'");

    const refused: [string, object][] = [
      ["no model", { input: "Hi" }],
      ["no input", { model: "gpt-5" }],
      ["a bad role", { ...ask, input: [{ role: "robot", content: "Hi" }] }],
      ["input_text in an assistant message", { ...ask, input: [{ role: "assistant", content: [{ type: "input_text", text: "Hi" }] }] }],
      ["output_text in a user message", { ...ask, input: [{ role: "user", content: [{ type: "output_text", text: "Hi" }] }] }],
      ["an image that is no URL", { ...ask, input: [{ role: "user", content: [{ type: "input_image", image_url: "not a url" }] }] }],
      ["object arguments", { ...ask, input: [{ ...call, arguments: {} }, { type: "function_call_output", call_id: "call_a", output: "4" }] }],
      ["a call without call_id", { ...ask, input: [{ type: "function_call", name: "python", arguments: "{}" }] }],
      ["a tool without parameters", { ...ask, tools: [{ type: "function", name: "python" }] }],
      ["a chat completions tool", { ...ask, tools: [{ type: "function", function: { name: "python", parameters: {} } }] }],
      ["a tool type this server lacks", { ...ask, tools: [{ type: "web_search" }] }],
      ["a code interpreter without container", { ...ask, tools: [{ type: "code_interpreter" }] }],
      ["an unknown container", { ...ask, tools: [interpreter("cntr_unknown")] }],
      ["an unknown include", { ...ask, include: ["everything"] }],
      ["stream_options without stream", { ...ask, stream_options: { include_obfuscation: false } }],
      ["a low max_output_tokens", { ...ask, max_output_tokens: 5 }],
      ["a previous response id", { ...ask, previous_response_id: "resp_123" }],
    ];
    for (const [what, body] of refused) {
      const error = await failure(api.responses.create(body as ResponseCreateParamsNonStreaming));
      expect(error, what).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.type, what).toBe("invalid_request_error");
    }

    // Answered, with every kind of item, the queued reply is still first.
    const valid = await api.responses.create({
      ...ask,
      input: [
        { role: "developer", content: "Be brief." },
        { role: "user", content: [{ type: "input_text", text: "Run it" }, { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" }] },
        // The SDK types an assistant message's parts as input parts; the API wants output parts there.
        { role: "assistant", content: [{ type: "output_text", text: "Running.", annotations: [] }] } as unknown as ResponseInputItem,
        call,
        { type: "function_call_output", call_id: "call_a", output: [{ type: "input_image", image_url: "https://example.com/plot.png", detail: "low" }] },
      ],
      tools: [{ ...pythonFunction, strict: false, parameters: { type: "object", properties: { code: { type: "string" } } } }],
    });
    expect(valid.output_text).toBe("Kept for the valid request.");
    expect(valid.tools).toEqual([{ type: "function", name: "python", description: "Run Python", parameters: { type: "object", properties: { code: { type: "string" } } }, strict: false }]);
    expect(await responsesRequests(session)).toHaveLength(6 + refused.length);

    // Left out, strict is on: the response repeats the schema made strict.
    const loose = { type: "function", name: "python", parameters: { type: "object", properties: { code: { type: "string" } } } };
    const normalized = await api.responses.create({ ...ask, tools: [loose as Tool] });
    expect(normalized.tools).toEqual([
      { type: "function", name: "python", description: null, parameters: { type: "object", properties: { code: { type: "string" } }, additionalProperties: false, required: ["code"] }, strict: true },
    ]);
  });

  it("sends a reasoning summary only when asked, and takes reasoning back only with encrypted content it issued or an id it stored", async () => {
    const session = freshSession();
    const api = client(session);
    const thinking: ResponsesReply = { output: [{ type: "reasoning", summary: "Adding the numbers up." }, { type: "message", text: "45" }] };
    await scriptResponses(session, [thinking, thinking, thinking, thinking, { output: [{ type: "message", text: "Continued." }] }]);

    const plain = await api.responses.create(ask);
    const plainReasoning = plain.output[0] as ResponseReasoningItem;
    expect(plainReasoning).toEqual({ id: expect.stringMatching(/^rs_/), type: "reasoning", summary: [] });

    const events = await eventsOf(api, { ...ask, store: false, reasoning: { effort: "low", summary: "auto" }, include: ["reasoning.encrypted_content"] });
    expect(ofType(events, "response.reasoning_summary_text.delta").map((event) => event.delta).join("")).toBe("Adding the numbers up.");
    expect(ofType(events, "response.reasoning_summary_part.done")[0].part).toEqual({ type: "summary_text", text: "Adding the numbers up." });
    const reasoning = completedOf(events).output[0] as ResponseReasoningItem;
    expect(reasoning).toMatchObject({ type: "reasoning", summary: [{ type: "summary_text", text: "Adding the numbers up." }] });
    expect(reasoning.encrypted_content).toMatch(/^gAAAAA/);
    expect(completedOf(events).reasoning).toEqual({ effort: "low", summary: "auto" });

    const turn = (item: ResponseInputItem): ResponseInputItem[] => [{ role: "user", content: "Add them" }, item, { role: "assistant", content: "45" }, { role: "user", content: "Again" }];
    // Without store, the item must come back with its encrypted content...
    const stateless = await api.responses.create({ ...ask, store: false, input: turn(reasoning), include: ["reasoning.encrypted_content"] });
    expect(stateless.output_text).toBe("45");
    // ...else it is not found, as nothing was stored.
    const unsigned = await failure(api.responses.create({ ...ask, store: false, input: turn({ ...reasoning, encrypted_content: undefined }) }));
    expect(unsigned).toMatchObject({ status: 404, type: "invalid_request_error", param: "input" });
    expect(unsigned.message).toContain(`Item with id '${reasoning.id}' not found. Items are not persisted when \`store\` is set to false.`);
    // Encrypted content this server did not issue cannot be verified.
    const forged = await failure(api.responses.create({ ...ask, store: false, input: turn({ ...reasoning, encrypted_content: `gAAAAA${"x".repeat(70)}==` }) }));
    expect(forged).toMatchObject({ status: 400, code: "invalid_encrypted_content", param: null });
    expect(forged.message).toBe("400 The encrypted content gAAA...xx== could not be verified.");
    // With store on, an item answered with store on is found by its id alone; the others are not.
    const stored = await api.responses.create({ ...ask, input: turn(plainReasoning) });
    expect(stored.output_text).toBe("45");
    const unknown = await failure(api.responses.create({ ...ask, input: turn({ ...plainReasoning, id: "rs_unknown" }) }));
    expect(unknown).toMatchObject({ status: 404, message: "404 Item with id 'rs_unknown' not found." });
    expect((await api.responses.create(ask)).output_text).toBe("Continued.");
  });

  it("plays scripted HTTP errors, and drops the stream after N events without response.completed", async () => {
    const session = freshSession();
    await scriptResponses(session, [
      { status: 429, error: { message: "Slow down", code: "rate_limit_exceeded" }, headers: { "retry-after": "0" } },
      { output: [{ type: "message", text: "one two three four five" }], dropAfterEvents: 6, delayMs: 5 },
      { output: [{ type: "message", text: "never" }], dropAfterEvents: 0 },
    ]);
    const api = client(session);
    const limited = await failure(api.responses.create(ask));
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
    expect(limited.headers?.get("retry-after")).toBe("0");

    const seen: ResponseStreamEvent[] = [];
    const dropped = await (async () => {
      for await (const event of await api.responses.create({ ...ask, stream: true })) seen.push(event);
    })().catch((error: unknown) => error);
    expect(dropped).toBeInstanceOf(Error);
    expect(seen.map((event) => event.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
    ]);
    await expect(api.responses.create(ask)).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
  });

  it("requires a session's key on the Responses and Containers APIs too, and preflights DELETE", async () => {
    const session = freshSession();
    await configure(session, { requireKey: "sk-local-secret" });
    await expect(client(session).responses.create(ask)).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(client(session).containers.create({ name: "x" })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    expect((await client(session, "sk-local-secret").responses.create(ask)).output_text).toBe("(no scripted reply)");
    expect((await responsesRequests(session)).map((request) => request.headers.authorization)).toEqual(["Bearer none", "Bearer sk-local-secret"]);
    const preflight = await fetch(`${url}/${session}/v1/containers/cntr_x`, {
      method: "OPTIONS",
      headers: { origin: "http://localhost:4173", "access-control-request-method": "DELETE" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toContain("DELETE");
  });
});

describe("fake OpenAI server: containers and the code interpreter", () => {
  it("creates containers, and uploads, lists, reads, downloads and deletes their files; other sessions see none of it", async () => {
    const session = freshSession();
    const api = client(session);
    const container = await api.containers.create({ name: "Data", expires_after: { anchor: "last_active_at", minutes: 5 } });
    expect(container).toEqual({
      id: expect.stringMatching(/^cntr_[0-9a-f]{48}$/),
      object: "container",
      created_at: expect.any(Number),
      status: "running",
      expires_after: { anchor: "last_active_at", minutes: 5 },
      last_active_at: expect.any(Number),
      memory_limit: "1g",
      name: "Data",
    });
    expect(await api.containers.retrieve(container.id)).toEqual(container);
    expect((await api.containers.create({ name: "Default" })).expires_after).toEqual({ anchor: "last_active_at", minutes: 20 });
    expect((await api.containers.list()).data.map((entry) => entry.name)).toEqual(["Default", "Data"]); // newest first

    const uploaded = await api.containers.files.create(container.id, { file: await toFile(Buffer.from("a,b\n1,2\n"), "data.csv") });
    expect(uploaded).toEqual({
      id: expect.stringMatching(/^cfile_[0-9a-f]{32}$/),
      object: "container.file",
      container_id: container.id,
      path: expect.stringMatching(/data\.csv$/),
      bytes: 8,
      created_at: expect.any(Number),
      source: "user",
    });
    expect(await readFile(uploaded.path, "utf8")).toBe("a,b\n1,2\n"); // a real path on this host
    expect((await api.containers.files.list(container.id)).data).toEqual([uploaded]);
    expect(await api.containers.files.retrieve(uploaded.id, { container_id: container.id })).toEqual(uploaded);
    const content = await api.containers.files.content.retrieve(uploaded.id, { container_id: container.id });
    expect(content.headers.get("content-type")).toBe("text/csv");
    expect(await content.text()).toBe("a,b\n1,2\n");
    const [snapshot] = (await containersOf(session)).filter((entry) => entry.id === container.id);
    expect(snapshot).toMatchObject({ name: "Data", status: "running", interpreter: false, files: [uploaded] });

    await expect(client(freshSession()).containers.retrieve(container.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(api.containers.files.retrieve("cfile_unknown", { container_id: container.id })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(api.containers.create({ name: "Copy", file_ids: ["file-abc"] })).rejects.toMatchObject({ status: 404, message: "404 No such File object: file-abc" });
    await expect(api.containers.create({} as { name: string })).rejects.toMatchObject({ status: 400, param: "name", code: "missing_required_parameter" });

    await api.containers.files.delete(uploaded.id, { container_id: container.id });
    expect(existsSync(uploaded.path)).toBe(false);
    expect((await api.containers.files.list(container.id)).data).toEqual([]);
    await api.containers.delete(container.id);
    await expect(api.containers.retrieve(container.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(existsSync(snapshot.dir)).toBe(false);
  });

  it("runs code in the container's own python3: variables persist between runs, logs come back, created files are cited and downloadable", async () => {
    const session = freshSession();
    const api = client(session);
    const container = await api.containers.create({ name: "Analysis" });
    const data = await api.containers.files.create(container.id, { file: await toFile(Buffer.from("3\n4\n5\n"), "numbers.txt") });
    await scriptResponses(session, [
      { execute: { text: "Saved doubled.csv for you." } },
      { execute: { code: "total * 2" } },
      { execute: { code: "1 / 0" } },
      { execute: {} },
      { execute: {} },
    ]);
    const code = [
      `numbers = [int(line) for line in open(${JSON.stringify(data.path)})]`,
      "total = sum(numbers)",
      "print('total', total)",
      "import sys; print('a warning', file=sys.stderr)",
      "open('doubled.csv', 'w').write('\\n'.join(str(2 * n) for n in numbers))",
      "with open('.hidden', 'w') as hidden:",
      "    hidden.write('not a container file')",
    ].join("\n");
    const input = `Add these up.\n\n\`\`\`python\n${code}\n\`\`\`\n`;
    const tools = [interpreter(container.id)];
    const include: ResponseCreateParamsNonStreaming["include"] = ["code_interpreter_call.outputs"];

    const events = await eventsOf(api, { ...ask, input, tools, include });
    const types = events.map((event) => event.type);
    const deltas = types.filter((type) => type === "response.code_interpreter_call_code.delta").length;
    expect(deltas).toBeGreaterThan(1);
    expect(types.slice(0, 9 + deltas)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.code_interpreter_call.in_progress",
      ...Array<string>(deltas).fill("response.code_interpreter_call_code.delta"),
      "response.code_interpreter_call_code.done",
      "response.code_interpreter_call.interpreting",
      "response.code_interpreter_call.completed",
      "response.output_item.done",
      "response.output_item.added",
    ]);
    expect(ofType(events, "response.output_item.added")[0].item).toMatchObject({ type: "code_interpreter_call", status: "in_progress", code: "", container_id: container.id, outputs: null });
    expect(ofType(events, "response.code_interpreter_call_code.delta").map((event) => event.delta).join("")).toBe(code);
    const response = completedOf(events);
    const call = response.output[0] as ResponseCodeInterpreterToolCall;
    expect(call).toEqual({ id: expect.stringMatching(/^ci_/), type: "code_interpreter_call", status: "completed", container_id: container.id, code, outputs: [{ type: "logs", logs: "total 12\na warning\n" }] });

    // The message cites the file the run made: the span of its name in the text.
    const text = "Saved doubled.csv for you.";
    const [annotation] = ofType(events, "response.output_text.annotation.added").map((event) => event.annotation);
    const files = (await api.containers.files.list(container.id)).data;
    const made = files.find((file) => file.path.endsWith("doubled.csv"))!;
    expect(made).toMatchObject({ source: "assistant", bytes: 6, container_id: container.id });
    expect(files.map((file) => file.id).sort()).toEqual([data.id, made.id].sort()); // not .hidden
    expect(annotation).toEqual({ type: "container_file_citation", container_id: container.id, file_id: made.id, filename: "doubled.csv", start_index: 6, end_index: 17 });
    expect(text.slice(6, 17)).toBe("doubled.csv");
    expect(response.output[1]).toMatchObject({ type: "message", content: [{ type: "output_text", text, annotations: [annotation] }] });
    const download = await api.containers.files.content.retrieve(made.id, { container_id: container.id });
    expect(await download.text()).toBe("6\n8\n10");

    // The second run sees the first one's variables; a last expression's value is shown, as in a notebook.
    const second = await api.responses.create({ ...ask, input: [...[{ role: "user" as const, content: input }], ...response.output.map((item) => item as ResponseInputItem), { role: "user", content: "Double it" }], tools, include });
    expect(second.output[0]).toMatchObject({ type: "code_interpreter_call", status: "completed", code: "total * 2", outputs: [{ type: "logs", logs: "24\n" }] });
    expect(second.output_text).toBe("Done.");
    expect((second.output[1] as ResponseOutputMessage).content[0]).toMatchObject({ annotations: [] }); // nothing created

    // An error is a traceback in the logs of a completed call; without the include, outputs are null.
    const failing = await api.responses.create({ ...ask, tools, include });
    expect(failing.output[0]).toMatchObject({ status: "completed", outputs: [{ type: "logs", logs: expect.stringContaining("ZeroDivisionError: division by zero") }] });
    const broken = await api.responses.create({ ...ask, input: "```python\nx = (\n```", tools, include });
    const brokenLogs = (broken.output[0] as ResponseCodeInterpreterToolCall).outputs![0] as { logs: string };
    expect(brokenLogs.logs).toMatch(/^ {2}File "<cell 4>", line 1\n {4}x = \(\n/);
    expect(brokenLogs.logs).toContain("SyntaxError: '(' was never closed");
    const hidden = await api.responses.create({ ...ask, input: "```python\nprint('quiet')\n```", tools });
    expect(hidden.output[0]).toMatchObject({ status: "completed", outputs: null });

    const [snapshot] = await containersOf(session);
    expect(snapshot).toMatchObject({ id: container.id, status: "running", interpreter: true });
  });

  it("returns each PNG a run creates as an image output, and the SDK's stream helper accepts a code interpreter response", async () => {
    const session = freshSession();
    const api = client(session);
    await scriptResponses(session, [{ execute: { text: "Here is pixel.png." } }]);
    const code = [
      "import struct, zlib",
      "def chunk(kind, data):",
      "    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))",
      "png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 1, 1, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(b'\\x00\\xff\\x00\\x00')) + chunk(b'IEND', b'')",
      "with open('pixel.png', 'wb') as file:",
      "    file.write(png)",
    ].join("\n");
    // Auto mode: the server makes a container for the run.
    const stream = api.responses.stream({ ...ask, input: `\`\`\`python\n${code}\n\`\`\``, tools: [interpreter({ type: "auto" })], include: ["code_interpreter_call.outputs"] });
    const response = await stream.finalResponse();
    const call = response.output[0] as ResponseCodeInterpreterToolCall;
    expect(call.status).toBe("completed");
    const [container] = await containersOf(session);
    expect(container).toMatchObject({ id: call.container_id, name: "auto", status: "running" });
    const png = await readFile(container.files[0].path);
    expect(call.outputs).toEqual([{ type: "logs", logs: "" }, { type: "image", url: `data:image/png;base64,${png.toString("base64")}` }]);
    expect(response.output_text).toBe("Here is pixel.png.");

    // Auto mode again, with that call in the input: the same container, still running, is used.
    await scriptResponses(session, [{ execute: { code: "import os; sorted(name for name in os.listdir('.') if not name.startswith('.'))" } }]);
    const again = await api.responses.create({ ...ask, input: [{ role: "user", content: "Run" }, call, { role: "user", content: "List" }], tools: [interpreter({ type: "auto" })], include: ["code_interpreter_call.outputs"] });
    expect(again.output[0]).toMatchObject({ container_id: call.container_id, outputs: [{ type: "logs", logs: "['pixel.png']\n" }] });
    expect(await containersOf(session)).toHaveLength(1);
  });

  it("refuses an expired container with a 400 'Container is expired.', which then reports status expired", async () => {
    const session = freshSession();
    const api = client(session);
    const container = await api.containers.create({ name: "Short-lived" });
    await scriptResponses(session, [{ execute: { code: "x = 1" } }, { output: [{ type: "message", text: "kept" }] }]);
    await api.responses.create({ ...ask, tools: [interpreter(container.id)] });
    const [before] = await containersOf(session);
    expect(before.interpreter).toBe(true);

    await control("expire-container", { id: container.id });
    expect((await api.containers.retrieve(container.id)).status).toBe("expired");
    const refused = await failure(api.responses.create({ ...ask, tools: [interpreter(container.id)] }));
    expect(refused).toMatchObject({ status: 400, type: "invalid_request_error", message: "400 Container is expired.", param: null, code: null });
    await expect(api.containers.files.list(container.id)).rejects.toMatchObject({ status: 400, message: "400 Container is expired." });
    const [after] = await containersOf(session);
    expect(after).toMatchObject({ status: "expired", interpreter: false });
    expect(existsSync(after.dir)).toBe(false);
    expect((await api.responses.create(ask)).output_text).toBe("kept"); // the refused request left the reply queued
  });

  it("stops a run over its time limit: the call fails, says so, and the restarted interpreter has lost its variables", async () => {
    const session = freshSession();
    const api = client(session);
    const container = await api.containers.create({ name: "Slow" });
    await scriptResponses(session, [
      { execute: { code: "x = 42\nprint('before')" } },
      { execute: { code: "import time\nprint('started', flush=True)\nwhile True:\n    time.sleep(0.01)", timeoutMs: 700 } },
      { execute: { code: "x" } },
    ]);
    const tools = [interpreter(container.id)];
    const include: ResponseCreateParamsNonStreaming["include"] = ["code_interpreter_call.outputs"];
    await api.responses.create({ ...ask, tools, include });

    const events = await eventsOf(api, { ...ask, tools, include });
    expect(ofType(events, "response.code_interpreter_call.completed")).toEqual([]);
    const timedOut = completedOf(events).output[0] as ResponseCodeInterpreterToolCall;
    expect(timedOut.status).toBe("failed");
    expect(timedOut.outputs).toEqual([{ type: "logs", logs: expect.stringMatching(/^started\nExecution timed out after 0\.7 s/) }]);
    expect(completedOf(events).status).toBe("completed");

    const after = await api.responses.create({ ...ask, tools, include });
    expect(after.output[0]).toMatchObject({ status: "completed", outputs: [{ type: "logs", logs: expect.stringContaining("NameError: name 'x' is not defined") }] });
  });

  it("takes its limits from the options, expires idle containers by itself, and removes every folder on close()", async () => {
    const other = await startFakeOpenAI({ execTimeoutMs: 500, containerIdleMs: 300 });
    try {
      const api = new OpenAI({ baseURL: `${other.url}/limits/v1`, apiKey: "none", maxRetries: 0 });
      const idle = await api.containers.create({ name: "Idle" });
      const kept = await api.containers.create({ name: "Kept", expires_after: { anchor: "last_active_at", minutes: 20 } });
      await fetch(`${other.url}/__kiln/script-responses`, { method: "POST", body: JSON.stringify({ session: "limits", replies: [{ execute: { code: "while True: pass" } }, { execute: { code: "y = 1", timeoutMs: 30_000 } }] }) });
      const slow = await api.responses.create({ ...ask, tools: [interpreter(kept.id)] });
      expect(slow.output[0]).toMatchObject({ status: "failed", outputs: null });
      // A run of its own limit (a fresh interpreter may take over 500 ms to start on a busy machine).
      const next = await api.responses.create({ ...ask, tools: [interpreter(kept.id)] });
      expect(next.output[0]).toMatchObject({ status: "completed" });
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect((await api.containers.retrieve(idle.id)).status).toBe("expired");
      expect((await api.containers.retrieve(kept.id)).status).toBe("running");
      const snapshots = (await (await fetch(`${other.url}/__kiln/containers?session=limits`)).json()) as ContainerSnapshot[];
      const running = snapshots.find((entry) => entry.id === kept.id)!;
      expect(running.interpreter).toBe(true);
      expect(existsSync(running.dir)).toBe(true);
      await other.close();
      expect(existsSync(running.dir)).toBe(false);
    } finally {
      await other.close().catch(() => {});
    }
  });

  it("resets a session's containers with the session", async () => {
    const session = freshSession();
    const container = await client(session).containers.create({ name: "Reset me" });
    const [snapshot] = await containersOf(session);
    await control("reset", { session });
    expect(await containersOf(session)).toEqual([]);
    expect(existsSync(snapshot.dir)).toBe(false);
    await expect(client(session).containers.retrieve(container.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
