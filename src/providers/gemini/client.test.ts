import { afterEach, describe, expect, it, vi } from "vitest";
import { ProviderError, type TurnRequest } from "../../chat/provider";
import { streamTurn } from "./client";

/** Stand in for Gemini's streaming endpoint: each chunk is one server-sent event. */
function stream(chunks: unknown[]): void {
  const body = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`).join("");
  vi.stubGlobal("fetch", async () => new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } }));
}

const request = (): TurnRequest => ({
  model: "gemini-test",
  system: "",
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
  tools: [],
  maxTokens: 64,
  signal: new AbortController().signal,
  onEvent: () => {},
});
const settings = { apiKey: "AIza-test", baseUrl: "https://generativelanguage.googleapis.com" };

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("how a Gemini answer ended", () => {
  it("an answer stopped for safety keeps its text and gives the reason", async () => {
    stream([
      { candidates: [{ content: { role: "model", parts: [{ text: "Here is how" }] }, index: 0 }] },
      { candidates: [{ content: { role: "model", parts: [{ text: " to" }] }, finishReason: "SAFETY", index: 0 }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4 } },
    ]);
    const reply = await streamTurn(settings, request());
    expect(reply).toMatchObject({ content: [{ type: "text", text: "Here is how to" }], finish: "refusal", finishDetail: "SAFETY" });
  });

  it("a malformed function call is an early end, not a finished empty answer", async () => {
    stream([{ candidates: [{ content: { role: "model", parts: [] }, finishReason: "MALFORMED_FUNCTION_CALL", index: 0 }] }]);
    expect(await streamTurn(settings, request())).toMatchObject({ content: [], finish: "refusal", finishDetail: "MALFORMED_FUNCTION_CALL" });
  });

  it("a prompt Gemini blocks fails with its reason, not as a lost connection, and is not retried", async () => {
    stream([{ promptFeedback: { blockReason: "PROHIBITED_CONTENT", blockReasonMessage: "The prompt was blocked." } }]);
    const retries: unknown[] = [];
    const refused = await streamTurn(settings, { ...request(), onEvent: (event) => retries.push(event) }).then(
      () => undefined,
      (cause: unknown) => cause,
    );
    expect(refused).toBeInstanceOf(ProviderError);
    expect((refused as ProviderError).message).toBe("Gemini refused to answer this conversation (PROHIBITED_CONTENT: The prompt was blocked.).");
    expect((refused as ProviderError).kind).toBe("invalid");
    expect(retries).toEqual([]);
  });

  it("an answer that reached the output limit says so", async () => {
    stream([{ candidates: [{ content: { role: "model", parts: [{ text: "Cut" }] }, finishReason: "MAX_TOKENS", index: 0 }] }]);
    expect(await streamTurn(settings, request())).toMatchObject({ finish: "max_tokens" });
  });
});
