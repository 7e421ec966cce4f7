import Anthropic, { type APIError } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic, type RecordedRequest, type Reply } from "./server.ts";

let url = "";
let close: () => Promise<void> = async () => {};

beforeAll(async () => {
  ({ url, close } = await startFakeAnthropic(0)); // 0: a free port
});
afterAll(() => close());

let keyCount = 0;
/** A fresh key, so each test has a queue and a request log of its own. */
const freshKey = () => `test-key-${++keyCount}`;
const client = (apiKey: string) => new Anthropic({ apiKey, baseURL: url, maxRetries: 0 });

async function script(key: string, replies: Reply[]): Promise<void> {
  const res = await fetch(`${url}/__kiln/script`, { method: "POST", body: JSON.stringify({ key, replies }) });
  expect(res.status).toBe(200);
}

async function requests(key: string): Promise<RecordedRequest[]> {
  return (await fetch(`${url}/__kiln/requests?key=${encodeURIComponent(key)}`)).json() as Promise<RecordedRequest[]>;
}

const hello = { model: "claude-haiku-4-5", max_tokens: 1024, messages: [{ role: "user" as const, content: "Hello" }] };

describe("fake Anthropic API", () => {
  it("streams a scripted text reply", async () => {
    const key = freshKey();
    await script(key, [{ content: [{ type: "text", text: "Hello there, from the fake API!" }] }]);
    const stream = client(key).messages.stream(hello);
    const deltas: string[] = [];
    stream.on("text", (text) => deltas.push(text));
    const message = await stream.finalMessage();
    expect(message.id).toMatch(/^msg_/);
    expect(message.content).toEqual([{ type: "text", text: "Hello there, from the fake API!" }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.output_tokens).toBeGreaterThan(1);
    expect(deltas.length).toBeGreaterThan(1);
  });

  it("streams tool_use input as input_json_delta chunks, the first one empty", async () => {
    const key = freshKey();
    const input = { code: "print(2 + 2)", note: "ünïcode ✓" };
    await script(key, [{ content: [{ type: "text", text: "Running it." }, { type: "tool_use", name: "run_python", input }] }]);
    const events = await client(key).messages.create({ ...hello, stream: true });
    const types: string[] = [];
    const partials: string[] = [];
    for await (const event of events) {
      types.push(event.type);
      if (event.type === "content_block_delta" && event.delta.type === "input_json_delta") partials.push(event.delta.partial_json);
    }
    expect(types[0]).toBe("message_start");
    expect(types.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(partials[0]).toBe("");
    expect(partials.length).toBeGreaterThan(2);
    expect(JSON.parse(partials.join(""))).toEqual(input);

    await script(key, [{ content: [{ type: "tool_use", name: "run_python", input }] }]);
    const message = await client(key).messages.stream(hello).finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content[0]).toMatchObject({ type: "tool_use", name: "run_python", input });
    expect((message.content[0] as Anthropic.ToolUseBlock).id).toMatch(/^toolu_/);
  });

  it("answers without a stream, and with a default reply when nothing is scripted", async () => {
    const message = await client(freshKey()).messages.create(hello);
    expect(message.content).toEqual([{ type: "text", text: "(no scripted reply)" }]);
    expect(message.stop_reason).toBe("end_turn");
  });

  it("rejects a bad key with a 401 authentication_error", async () => {
    const failure = await client("bad-key").messages.create(hello).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((failure as APIError).status).toBe(401);
    expect((failure as APIError).requestID).toMatch(/^req_/);
    await expect(client("bad-key").models.list()).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it("lists models", async () => {
    const page = await client(freshKey()).models.list();
    expect(page.data.map((model) => model.id)).toEqual(["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-4-5"]);
  });

  it("refuses a tool_result without a matching tool_use, and an unanswered tool_use", async () => {
    const api = client(freshKey());
    const stray = api.messages.create({
      ...hello,
      messages: [
        { role: "user", content: "Run it" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_a", name: "run_python", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_b", content: "4" }] },
      ],
    });
    await expect(stray).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(stray).rejects.toMatchObject({ status: 400, type: "invalid_request_error", apiMessage: expect.stringContaining("toolu_b") });

    const unanswered = api.messages.create({
      ...hello,
      messages: [
        { role: "user", content: "Run it" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_a", name: "run_python", input: {} }] },
        { role: "user", content: "and?" },
      ],
    });
    await expect(unanswered).rejects.toMatchObject({ status: 400, apiMessage: expect.stringContaining("toolu_a") });
    const badTool = api.messages.create({ ...hello, tools: [{ name: "x", input_schema: { type: "array" } } as unknown as Anthropic.Tool] });
    await expect(badTool).rejects.toMatchObject({ status: 400 });
    const noModel = api.messages.create({ ...hello, model: "" });
    await expect(noModel).rejects.toMatchObject({ status: 400 });
  });

  it("plays scripted HTTP errors and mid-stream errors", async () => {
    const key = freshKey();
    await script(key, [
      { status: 529, error: { type: "overloaded_error", message: "Overloaded" } },
      { status: 429, error: { type: "rate_limit_error", message: "Slow down" }, headers: { "retry-after": "0" } },
      { content: [{ type: "text", text: "partial" }, { type: "text", text: "never" }], errorAfterBlocks: 1 },
      { content: [{ type: "text", text: "partial" }, { type: "text", text: "never" }], dropAfterBlocks: 1, delayMs: 5 },
    ]);
    await expect(client(key).messages.create(hello)).rejects.toMatchObject({ status: 529, type: "overloaded_error" });
    const limited = await client(key).messages.create(hello).catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as APIError).headers?.get("retry-after")).toBe("0");
    const stream = client(key).messages.stream(hello);
    await expect(stream.finalMessage()).rejects.toMatchObject({ type: "overloaded_error" });
    const dropped = client(key).messages.stream(hello);
    const texts: string[] = [];
    dropped.on("text", (text) => texts.push(text));
    const failure = await dropped.finalMessage().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(texts.join("")).toBe("partial");
  });

  it("records the requests of a key, and resets them", async () => {
    const key = freshKey();
    await client(key).messages.create(hello);
    await client(key).messages.create({ ...hello, max_tokens: 5 });
    const seen = await requests(key);
    expect(seen.map((request) => request.body)).toEqual([hello, { ...hello, max_tokens: 5 }]);
    expect(seen[0].headers["anthropic-version"]).toBeTruthy();
    expect(seen[0].headers["x-api-key"] ?? seen[0].headers.authorization).toContain(key);
    expect(await requests(freshKey())).toEqual([]);
    await fetch(`${url}/__kiln/reset`, { method: "POST", body: JSON.stringify({ key }) });
    expect(await requests(key)).toEqual([]);
  });

  it("answers CORS preflights", async () => {
    const res = await fetch(`${url}/v1/messages`, {
      method: "OPTIONS",
      headers: { origin: "http://localhost:4173", "access-control-request-method": "POST", "access-control-request-headers": "x-api-key, content-type" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toBe("GET, POST, DELETE, OPTIONS");
    expect(res.headers.get("access-control-allow-headers")).toBe("x-api-key, content-type");
    expect(res.headers.get("access-control-max-age")).toBe("600");
    expect(res.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
    const models = await fetch(`${url}/v1/models`, { headers: { "x-api-key": freshKey() } });
    expect(models.headers.get("access-control-expose-headers")).toBe("request-id, retry-after");
    expect(models.headers.get("request-id")).toMatch(/^req_/);
  });
});
