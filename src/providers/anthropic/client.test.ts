import { afterEach, describe, expect, it, vi } from "vitest";
import { ProviderError, redactKey, type SandboxStore } from "../../chat/provider";
import { listModels, streamMessage, type ProviderSettings, type StreamRequest } from "./client";
import { anthropic } from "./provider";

const KEY = "sk-ant-api03-Secret_Key-1234567890";
const settings = (baseUrl: string): ProviderSettings => ({ apiKey: KEY, baseUrl, model: "claude-test", maxTokens: 16 });

/** Stand in for the network: every request gets `status` with `body` as JSON; returns the requests made. */
function answer(status: number, body: unknown): Request[] {
  const requests: Request[] = [];
  vi.stubGlobal("fetch", async (input: RequestInfo | URL, init?: RequestInit) => {
    requests.push(new Request(input, init));
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "request-id": "req_1" } });
  });
  return requests;
}

const request = (): StreamRequest => ({
  system: "",
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
  tools: [],
  signal: new AbortController().signal,
  onEvent: () => {},
});

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (cause: unknown) => cause,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("redactKey", () => {
  it("replaces every copy of the key", () => {
    expect(redactKey(`x-api-key: ${KEY}; again ${KEY}.`, KEY)).toBe("x-api-key: [API key]; again [API key].");
    expect(redactKey(`Bearer ${KEY}`, ` ${KEY}\n`)).toBe("Bearer [API key]");
    expect(redactKey("nothing to hide", KEY)).toBe("nothing to hide");
    expect(redactKey("no key saved", "")).toBe("no key saved");
  });
});

describe("the key goes only where it is meant to", () => {
  it("shows an error that echoes the key with the key redacted", async () => {
    answer(400, { type: "error", error: { type: "invalid_request_error", message: `bad header Authorization: Bearer ${KEY}` } });
    const refused = await failure(streamMessage(settings("https://api.anthropic.com"), request()));
    expect(refused.message).not.toContain(KEY);
    expect(refused.message).toContain("Bearer [API key]");

    // A proxy's own error shape: the SDK's message is the whole body.
    answer(418, { detail: `headers were {"x-api-key": "${KEY}"}` });
    const odd = await failure(listModels(settings("http://localhost:8080/v1")));
    expect(odd.message).not.toContain(KEY);
    expect(odd.message).toContain("[API key]");
  });

  it("sends the key only to the checked Base URL, in a header", async () => {
    const requests = answer(200, { data: [{ id: "claude-test", type: "model" }], has_more: false, first_id: null, last_id: null });
    expect(await listModels(settings("http://127.0.0.1:8080/token/"))).toEqual(["claude-test"]);
    expect(requests).toHaveLength(1);
    const url = new URL(requests[0].url);
    expect(url.origin + url.pathname).toBe("http://127.0.0.1:8080/token/v1/models");
    expect(requests[0].url).not.toContain(KEY);
  });

  it("uses the default Base URL when none is set", async () => {
    const requests = answer(200, { data: [], has_more: false, first_id: null, last_id: null });
    await listModels(settings(""));
    expect(new URL(requests[0].url).origin).toBe("https://api.anthropic.com");
  });

  it("fails with the Base URL's problem, without a request, when the stored Base URL may not get the key", async () => {
    for (const baseUrl of ["http://example.com", "https://user:pw@host", "ftp://x", "not a url", "javascript:alert(1)"]) {
      const requests = answer(200, {});
      const refused = await failure(streamMessage(settings(baseUrl), request()));
      expect(refused.kind).toBe("invalid");
      expect(refused.message).toMatch(/Base URL.*Settings/s);
      const listed = await failure(listModels(settings(baseUrl)));
      expect(listed.kind).toBe("invalid");
      expect(requests).toHaveLength(0);
    }
  });
});

describe("a tool call cut short", () => {
  it("keeps the arguments as sent, not run, instead of failing the answer on the broken JSON", async () => {
    const events: [string, unknown][] = [
      ["message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } } }],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "python", input: {} } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"code": "print(' } }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["message_delta", { type: "message_delta", delta: { stop_reason: "max_tokens", stop_sequence: null }, usage: { output_tokens: 16 } }],
      ["message_stop", { type: "message_stop" }],
    ];
    const body = events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");
    vi.stubGlobal("fetch", async () => new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } }));
    const provider = anthropic.create(
      { apiKey: KEY, rememberKey: false, baseUrl: "https://api.anthropic.com", model: "claude-test", sandboxTool: "" },
      {} as SandboxStore,
    );
    const reply = await provider.streamTurn({
      model: "claude-test",
      system: "",
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      tools: [],
      maxTokens: 16,
      signal: new AbortController().signal,
      onEvent: () => {},
    });
    expect(reply.finish).toBe("max_tokens");
    expect(reply.content).toEqual([{ type: "tool_call", id: "toolu_1", name: "python", input: {}, invalidInput: '{"code": "print(' }]);
  });
});
