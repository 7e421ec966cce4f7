import type OpenAI from "openai";
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import type { TextBlock, ToolCallBlock, Usage } from "../../model/conversation";
import { lazySdk, ProviderError, redactKey, type FinishReason, type TurnEvent } from "../../chat/provider";
import { retryAfter, withRetries } from "../../chat/retry";
import { checkApiBaseUrl } from "../../storage/settings";

export const DEFAULT_BASE_URL = "http://localhost:11434/v1";

export interface ServerSettings {
  apiKey: string;
  baseUrl: string;
}

export interface CompletionRequest {
  model: string;
  messages: ChatCompletionMessageParam[];
  tools: ChatCompletionTool[];
  maxTokens: number;
  signal: AbortSignal;
  onEvent: (event: TurnEvent) => void;
}

export interface CompletionReply {
  content: (TextBlock | ToolCallBlock)[];
  finish: FinishReason;
  usage: Usage;
}

const client = (settings: ServerSettings) => sdkClient(settings, DEFAULT_BASE_URL);

/** The `openai` SDK, shared with OpenAI's own provider. */
export const openaiSdk = lazySdk(() => import("openai"));

/** An `openai` SDK client for `settings`, whose Base URL is checked right before the key is handed over. */
export async function sdkClient(settings: ServerSettings, defaultBaseUrl: string): Promise<{ api: OpenAI; baseUrl: string }> {
  // A bad stored Base URL fails here instead of getting the key.
  const checked = checkApiBaseUrl(settings.baseUrl.trim() || defaultBaseUrl);
  if (!checked.ok) throw new ProviderError(`${checked.message} Fix it in Settings.`, "invalid");
  const { default: OpenAI } = await openaiSdk.load();
  const api = new OpenAI({
    // Local servers take no key; the SDK wants one, and a server that ignores it gets a placeholder.
    apiKey: settings.apiKey.trim() || "no-key",
    baseURL: checked.url,
    dangerouslyAllowBrowser: true,
    maxRetries: 0, // Kiln retries itself, so the person sees it happen.
  });
  return { api, baseUrl: checked.url };
}

/** Model ids the server offers (`GET /models`). */
export async function listModels(settings: ServerSettings, signal?: AbortSignal): Promise<string[]> {
  const { api, baseUrl } = await client(settings);
  try {
    const page = await api.models.list({ signal });
    return page.data.map((model) => model.id);
  } catch (cause) {
    throw describe(cause, [], settings.apiKey, baseUrl);
  }
}

/** One streamed Chat Completion, retrying what may pass. */
export function streamCompletion(settings: ServerSettings, request: CompletionRequest): Promise<CompletionReply> {
  return withRetries(
    () => streamOnce(settings, request),
    request.signal,
    (retry) => request.onEvent({ type: "retry", ...retry }),
  );
}

const FINISH: Record<string, FinishReason> = { stop: "end", tool_calls: "tool_calls", function_call: "tool_calls", length: "max_tokens", content_filter: "refusal" };

async function streamOnce(settings: ServerSettings, request: CompletionRequest): Promise<CompletionReply> {
  const { api, baseUrl } = await client(settings);
  const text: TextBlock = { type: "text", text: "" };
  /** Tool calls by their stream index, assembled from deltas. */
  const calls: { id: string; name: string; arguments: string }[] = [];
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let finish: string | undefined;
  const partial = () => (text.text ? [text] : []);
  try {
    const stream = await api.chat.completions.create(
      {
        model: request.model,
        messages: request.messages,
        tools: request.tools,
        max_tokens: request.maxTokens,
        stream: true,
        stream_options: { include_usage: true },
      },
      { signal: request.signal },
    );
    for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
      if (chunk.usage) usage.inputTokens = chunk.usage.prompt_tokens ?? 0;
      if (chunk.usage) usage.outputTokens = chunk.usage.completion_tokens ?? 0;
      const choice = chunk.choices[0];
      if (!choice) continue;
      const delta = choice.delta ?? {};
      if (delta.content) {
        text.text += delta.content;
        request.onEvent({ type: "text", index: 0, text: delta.content });
      }
      for (const part of delta.tool_calls ?? []) {
        const call = (calls[part.index] ??= { id: "", name: "", arguments: "" });
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  } catch (cause) {
    throw describe(cause, partial(), settings.apiKey, baseUrl);
  }
  if (request.signal.aborted) throw new ProviderError("Stopped.", "aborted", partial());
  if (!finish) throw new ProviderError("The connection to the model server was lost mid-answer.", "network", partial());
  const content: (TextBlock | ToolCallBlock)[] = text.text ? [text] : [];
  calls.filter(Boolean).forEach((call, i) => {
    const block = toolCall(call, i);
    content.push(block);
    request.onEvent({ type: "block", index: content.length - 1, block });
  });
  return { content, finish: FINISH[finish] ?? "end", usage };
}

/** A streamed tool call as a block: its arguments parsed, or kept as sent when they are not a JSON object. */
function toolCall(call: { id: string; name: string; arguments: string }, index: number): ToolCallBlock {
  // Some servers send no id: one is made up, and sent back as the call's id.
  const id = call.id || `call_kiln_${index}_${Math.random().toString(36).slice(2, 10)}`;
  try {
    const input: unknown = JSON.parse(call.arguments || "{}");
    if (input && typeof input === "object" && !Array.isArray(input)) return { type: "tool_call", id, name: call.name, input };
  } catch {
    // Not JSON: kept as sent, below.
  }
  return { type: "tool_call", id, name: call.name, input: {}, invalidInput: call.arguments };
}

/** How a provider speaking through the `openai` SDK words its failures. */
export interface FailureWords {
  /** The server, as in "the model server refused the request". */
  server: string;
  /** What is known when nothing came back (no connection, or an answer without CORS headers). */
  unreachable: string;
}

const localServer = (baseUrl: string): FailureWords => {
  const origin = typeof location !== "undefined" ? location.origin : "this page's origin";
  return {
    server: "the model server",
    unreachable:
      `Could not reach the model server at ${baseUrl}. Check that it is running. If it is, it must allow requests ` +
      `from this page (CORS): for Ollama, set OLLAMA_ORIGINS=${origin} and restart it; in LM Studio, turn on ` +
      `"Enable CORS" in the server settings; other servers need ${origin} in their allowed origins.`,
  };
};

const describe = (cause: unknown, partial: TextBlock[], apiKey: string, baseUrl: string) =>
  describeFailure(cause, partial, apiKey, localServer(baseUrl));

/** A failure of the `openai` SDK in words for the person; what the server said has the key redacted. */
export function describeFailure(cause: unknown, partial: TextBlock[], apiKey: string, words: FailureWords): ProviderError {
  const server = words.server.charAt(0).toUpperCase() + words.server.slice(1);
  if (cause instanceof ProviderError) return cause;
  const said = cause instanceof Error ? cause.message : String(cause);
  const text = redactKey(said, apiKey);
  // The SDK's errors come only from requests, which load it first.
  const errors = openaiSdk.loaded?.default;
  if ((errors && cause instanceof errors.APIUserAbortError) || (cause instanceof Error && cause.name === "AbortError")) {
    return new ProviderError("Stopped.", "aborted", partial);
  }
  if (errors && (cause instanceof errors.AuthenticationError || cause instanceof errors.PermissionDeniedError)) {
    return new ProviderError(`${server} did not accept the API key. Check it in Settings.`, "auth", partial);
  }
  if (errors && cause instanceof errors.NotFoundError) {
    return new ProviderError(`Model not found: ${text}. Choose another model.`, "model", partial);
  }
  const wait = retryAfter((cause as { headers?: Headers }).headers);
  if (errors && cause instanceof errors.RateLimitError) return new ProviderError(`Rate limited: ${text}`, "rate", partial, wait);
  if (errors && (cause instanceof errors.BadRequestError || cause instanceof errors.UnprocessableEntityError)) {
    return new ProviderError(`${server} refused the request: ${text}`, "invalid", partial);
  }
  if (errors && cause instanceof errors.APIConnectionError) {
    if (typeof navigator !== "undefined" && navigator.onLine === false) {
      return new ProviderError("You are offline. Your message is saved; retry when you are back online.", "offline", partial);
    }
    return new ProviderError(words.unreachable, "network", partial);
  }
  const status = (cause as { status?: number })?.status;
  if (status === 503 || status === 529) return new ProviderError(`${server} is overloaded: ${text}`, "overloaded", partial, wait);
  if (typeof status === "number" && status >= 500) return new ProviderError(`${server} failed (${status}): ${text}`, "server", partial, wait);
  if (errors && cause instanceof errors.APIError) return new ProviderError(`${server} reported an error: ${text}`, "server", partial);
  // A stream cut mid-answer ("network error", "terminated"): what was streamed stays.
  return new ProviderError(`The connection to ${words.server} was lost (${text}).`, "network", partial);
}
