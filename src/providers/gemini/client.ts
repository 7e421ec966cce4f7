import type { GenerateContentResponse, GoogleGenAI } from "@google/genai";
import type { ContentBlock, TextBlock, ToolCallBlock, Usage } from "../../model/conversation";
import { lazySdk, ProviderError, redactKey, type FinishReason, type TurnReply, type TurnRequest } from "../../chat/provider";
import { withRetries } from "../../chat/retry";
import { checkApiBaseUrl } from "../../storage/settings";
import { fromFunctionCall, toContents, toDeclaration } from "./wire";

export const DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com";

export interface GeminiSettings {
  apiKey: string;
  baseUrl: string;
}

const sdk = lazySdk(() => import("@google/genai"));

/** A client for `settings`, whose Base URL is checked right before the key is handed over. */
export async function client(settings: GeminiSettings): Promise<GoogleGenAI> {
  const checked = checkApiBaseUrl(settings.baseUrl.trim() || DEFAULT_BASE_URL);
  if (!checked.ok) throw new ProviderError(`${checked.message} Fix it in Settings.`, "invalid");
  const { GoogleGenAI } = await sdk.load();
  // v1beta: function calling with thought signatures and code execution, as documented for the Gemini API.
  return new GoogleGenAI({ apiKey: settings.apiKey, apiVersion: "v1beta", httpOptions: { baseUrl: checked.url } });
}

/** Model ids the key can use (without the `models/` prefix), those that can generate content. */
export async function listModels(settings: GeminiSettings, signal?: AbortSignal): Promise<string[]> {
  try {
    const pager = await (await client(settings)).models.list({ config: { abortSignal: signal } });
    const ids: string[] = [];
    for await (const model of pager) {
      if (model.name && (model.supportedActions ?? ["generateContent"]).includes("generateContent")) ids.push(model.name.replace(/^models\//, ""));
    }
    return ids;
  } catch (cause) {
    throw describe(cause, [], settings.apiKey);
  }
}

const LOST = "The connection to Gemini's API was lost mid-answer.";

const FINISH: Record<string, FinishReason> = { STOP: "end", FINISH_REASON_UNSPECIFIED: "end", MAX_TOKENS: "max_tokens" };

/** One model turn with function calling, streamed. */
export function streamTurn(settings: GeminiSettings, request: TurnRequest): Promise<TurnReply> {
  return withRetries(() => streamOnce(settings, request), request.signal, (retry) => request.onEvent({ type: "retry", ...retry }));
}

async function streamOnce(settings: GeminiSettings, request: TurnRequest): Promise<TurnReply> {
  const text: TextBlock = { type: "text", text: "" };
  const calls: ToolCallBlock[] = [];
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let finish: string | undefined;
  let streaming = false;
  const partial = () => (text.text ? [text] : []);
  try {
    const stream = await (await client(settings)).models.generateContentStream({
      model: request.model,
      contents: toContents(request.messages),
      config: {
        systemInstruction: request.system,
        tools: [{ functionDeclarations: request.tools.map(toDeclaration) }],
        maxOutputTokens: request.maxTokens,
        abortSignal: request.signal,
      },
    });
    for await (const chunk of stream as AsyncIterable<GenerateContentResponse>) {
      streaming = true;
      if (chunk.usageMetadata) {
        usage.inputTokens = chunk.usageMetadata.promptTokenCount ?? usage.inputTokens;
        usage.outputTokens = chunk.usageMetadata.candidatesTokenCount ?? usage.outputTokens;
      }
      const candidate = chunk.candidates?.[0];
      for (const part of candidate?.content?.parts ?? []) {
        if (part.functionCall) {
          const block = fromFunctionCall(part);
          calls.push(block);
          request.onEvent({ type: "block", index: calls.length, block });
        } else if (typeof part.text === "string" && !part.thought) {
          text.text += part.text;
          request.onEvent({ type: "text", index: 0, text: part.text });
        }
      }
      if (candidate?.finishReason) finish = candidate.finishReason;
      // A prompt Gemini refuses to answer gets no candidate at all, only the reason.
      const blocked = chunk.promptFeedback?.blockReason;
      if (blocked && !candidate) {
        const why = chunk.promptFeedback?.blockReasonMessage;
        throw new ProviderError(`Gemini refused to answer this conversation (${blocked}${why ? `: ${why}` : ""}).`, "invalid", partial());
      }
    }
  } catch (cause) {
    const error = describe(cause, partial(), settings.apiKey);
    // Cut after the answer began: not a matter of reaching the API.
    if (streaming && error.kind === "network") throw new ProviderError(LOST, "network", partial());
    throw error;
  }
  if (request.signal.aborted) throw new ProviderError("Stopped.", "aborted", partial());
  if (!finish) throw new ProviderError(LOST, "network", partial());
  const content: ContentBlock[] = [...partial(), ...calls];
  if (calls.length) return { content, finish: "tool_calls", usage };
  // Any other reason (SAFETY, RECITATION, MALFORMED_FUNCTION_CALL, …) ended the answer early.
  return { content, finish: FINISH[finish] ?? "refusal", ...(FINISH[finish] ? {} : { finishDetail: finish }), usage };
}

/** A failure in words for the person; what the API said has the key redacted. */
export function describe(cause: unknown, partial: TextBlock[], apiKey: string): ProviderError {
  if (cause instanceof ProviderError) return cause;
  const said = cause instanceof Error ? cause.message : String(cause);
  const text = redactKey(said, apiKey);
  if ((cause instanceof Error && cause.name === "AbortError") || /aborted/i.test(said)) return new ProviderError("Stopped.", "aborted", partial);
  // The SDK's errors come only from requests, which load it first.
  const errors = sdk.loaded;
  if (errors && cause instanceof errors.ApiError) {
    const status = cause.status;
    if (status === 401 || status === 403 || /API_KEY_INVALID|API key not valid/i.test(said)) {
      return new ProviderError("Gemini's API did not accept the API key. Check it in Settings.", "auth", partial);
    }
    if (status === 404) return new ProviderError(`Model not found: ${text}. Choose another model.`, "model", partial);
    if (status === 429) return new ProviderError(`Rate limited: ${text}`, "rate", partial);
    if (status === 503) return new ProviderError(`Gemini's API is overloaded: ${text}`, "overloaded", partial);
    if (status >= 500) return new ProviderError(`Gemini's API failed (${status}): ${text}`, "server", partial);
    return new ProviderError(`Gemini's API refused the request: ${text}`, "invalid", partial);
  }
  if (typeof navigator !== "undefined" && navigator.onLine === false) {
    return new ProviderError("You are offline. Your message is saved; retry when you are back online.", "offline", partial);
  }
  return new ProviderError(
    "Could not reach Gemini's API. Either the network is down, or the API answered with an error that the browser hides " +
      "(error responses without CORS headers look like this): check the API key and the model name, then retry.",
    "network",
    partial,
  );
}
