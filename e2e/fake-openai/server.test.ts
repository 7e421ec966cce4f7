import OpenAI, { type APIError } from "openai";
import type { ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type RecordedRequest, type Reply, type SessionConfig } from "./server.ts";

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
