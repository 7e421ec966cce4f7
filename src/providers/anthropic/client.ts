import type Anthropic from "@anthropic-ai/sdk";
import type { TextBlock, ToolCallBlock, Usage } from "../../model/conversation";
import { lazySdk, ProviderError, redactKey, type TurnEvent } from "../../chat/provider";
import { retryAfter, withRetries } from "../../chat/retry";
import { checkApiBaseUrl } from "../../storage/settings";

export const DEFAULT_BASE_URL = "https://api.anthropic.com";

export interface ProviderSettings {
  apiKey: string;
  baseUrl: string;
  model: string;
  maxTokens: number;
}

/** Any content block in the API's own shape. */
export type ApiBlock = { type: string } & Record<string, unknown>;

export interface ApiTool {
  name: string;
  description: string;
  input_schema: { type: "object"; properties: Record<string, unknown>; required?: string[] };
}

export type ApiMessage = { role: "user" | "assistant"; content: ApiBlock[] };


export interface StreamRequest {
  system: string;
  messages: ApiMessage[];
  /** Client tools, or server tools such as `{type: "code_execution_20260521", name: "code_execution"}`. */
  tools: (ApiTool | ApiBlock)[];
  /** The code execution container to reuse. */
  container?: string;
  signal: AbortSignal;
  onEvent: (event: TurnEvent) => void;
}

export interface StreamReply {
  /** Every block in the API's shape, in order. */
  blocks: ApiBlock[];
  stopReason: string;
  usage: Usage;
  /** The code execution container the answer used. */
  container?: { id: string; expiresAt: string };
  /** Tool calls whose arguments were not a JSON object (cut short), by id: the arguments as sent. */
  invalidInputs: Record<string, string>;
}
const sdk = lazySdk(() => import("@anthropic-ai/sdk"));

async function client(settings: ProviderSettings): Promise<Anthropic> {
  // Checked right before the key is handed over: a bad stored Base URL fails here instead of getting the key.
  const baseUrl = checkApiBaseUrl(settings.baseUrl.trim() || DEFAULT_BASE_URL);
  if (!baseUrl.ok) throw new ProviderError(`${baseUrl.message} Fix it in Settings.`, "invalid");
  const { default: Anthropic } = await sdk.load();
  return new Anthropic({
    apiKey: settings.apiKey,
    baseURL: baseUrl.url,
    dangerouslyAllowBrowser: true,
    maxRetries: 0, // Kiln retries itself, so the person sees it happen.
  });
}

/** Model ids the key can use (Models API). */
export async function listModels(settings: ProviderSettings): Promise<string[]> {
  try {
    const page = await (await client(settings)).models.list({ limit: 100 });
    return page.data.map((model) => model.id);
  } catch (error) {
    throw describe(error, [], settings.apiKey);
  }
}

/** Upload a file with the Files API; returns its id. */
export async function uploadFile(settings: ProviderSettings, name: string, data: Uint8Array, signal?: AbortSignal): Promise<string> {
  try {
    const api = await client(settings);
    const { toFile } = await sdk.load();
    const file = await api.files.upload({ file: await toFile(data, name) }, { signal });
    return file.id;
  } catch (error) {
    throw describe(error, [], settings.apiKey);
  }
}

/** A file's name and content, for a file that code execution created. */
export async function downloadFile(
  settings: ProviderSettings,
  fileId: string,
  signal?: AbortSignal,
): Promise<{ name: string; data: Uint8Array }> {
  try {
    const api = await client(settings);
    const meta = await api.files.retrieveMetadata(fileId, {}, { signal });
    const response = await api.files.download(fileId, {}, { signal });
    return { name: meta.filename, data: new Uint8Array(await response.arrayBuffer()) };
  } catch (error) {
    throw describe(error, [], settings.apiKey);
  }
}

/**
 * One assistant message, streamed. Retries 429/5xx/529 and dropped connections that
 * streamed nothing, with backoff; every other failure becomes a {@link ProviderError}.
 */
/** One assistant message, streamed, retrying what may pass (see withRetries). */
export function streamMessage(settings: ProviderSettings, request: StreamRequest): Promise<StreamReply> {
  return withRetries(
    () => streamOnce(settings, request),
    request.signal,
    (retry) => request.onEvent({ type: "retry", ...retry }),
  );
}

async function streamOnce(settings: ProviderSettings, request: StreamRequest): Promise<StreamReply> {
  /** The text and tool calls streamed so far, for a failure's partial answer. */
  const shown: (TextBlock | ToolCallBlock)[] = [];
  try {
    return await read(settings, request, shown);
  } catch (cause) {
    throw describe(cause, shown.filter(Boolean), settings.apiKey);
  }
}

async function read(settings: ProviderSettings, request: StreamRequest, shown: (TextBlock | ToolCallBlock)[]): Promise<StreamReply> {
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let stopReason = "end_turn";
  let complete = false;
  let container: StreamReply["container"];
  const json: string[] = [];
  const invalidInputs: Record<string, string> = {};
  /** Every block in order, in the API's shape, as it must be sent back. */
  const raw: ApiBlock[] = [];
  const stream = await (await client(settings)).messages.create(
    {
      model: settings.model,
      max_tokens: settings.maxTokens,
      system: request.system,
      messages: request.messages as unknown as Anthropic.MessageParam[],
      tools: request.tools as Anthropic.ToolUnion[],
      ...(request.container ? { container: request.container } : {}),
      stream: true,
    },
    { signal: request.signal },
  );
  for await (const event of stream) {
    switch (event.type) {
      case "message_start":
        usage.inputTokens = event.message.usage.input_tokens;
        usage.outputTokens = event.message.usage.output_tokens;
        break;
      case "content_block_start": {
        const block = event.content_block;
        if (block.type === "text") shown[event.index] = { type: "text", text: block.text };
        else if (block.type === "tool_use") shown[event.index] = { type: "tool_call", id: block.id, name: block.name, input: {} };
        raw[event.index] = { ...(block as unknown as ApiBlock) };
        json[event.index] = "";
        break;
      }
      case "content_block_delta": {
        const block = shown[event.index];
        const whole = raw[event.index];
        const delta = event.delta;
        if (delta.type === "text_delta" && block?.type === "text") {
          block.text += delta.text;
          request.onEvent({ type: "text", index: event.index, text: delta.text });
        } else if (delta.type === "input_json_delta") {
          json[event.index] += delta.partial_json;
        } else if (delta.type === "thinking_delta" && whole) {
          whole.thinking = String(whole.thinking ?? "") + delta.thinking;
        } else if (delta.type === "signature_delta" && whole) {
          whole.signature = delta.signature;
        }
        break;
      }
      case "content_block_stop": {
        const block = shown[event.index];
        const sent = json[event.index];
        const input = sent ? parseInput(sent) : undefined;
        const whole = raw[event.index];
        if (block?.type === "tool_call") {
          block.input = input ?? {};
          // Arguments cut short (the answer reached max_tokens mid-call) are kept as sent, and not run.
          if (sent && input === undefined) invalidInputs[block.id] = block.invalidInput = sent;
        }
        if (whole?.type === "text" && block?.type === "text") whole.text = block.text;
        else if (whole && sent) whole.input = input ?? {};
        if (block) request.onEvent({ type: "block", index: event.index, block });
        break;
      }
      case "message_delta": {
        if (event.delta.stop_reason) stopReason = event.delta.stop_reason;
        const delta = event.delta as { container?: { id: string; expires_at: string } | null };
        if (delta.container) container = { id: delta.container.id, expiresAt: delta.container.expires_at };
        usage.outputTokens = event.usage.output_tokens;
        if (event.usage.input_tokens != null) usage.inputTokens = event.usage.input_tokens;
        break;
      }
      case "message_stop":
        complete = true;
        break;
    }
  }
  // An aborted or cut stream can end without an error: only message_stop means complete.
  if (request.signal.aborted) throw new ProviderError("Stopped.", "aborted");
  if (!complete) throw new ProviderError("The connection to the API was lost mid-answer.", "network");
  return { blocks: raw.filter(Boolean), stopReason, usage, invalidInputs, ...(container ? { container } : {}) };
}

/** A tool call's streamed arguments as a JSON object, or undefined when they are not one. */
function parseInput(sent: string): Record<string, unknown> | undefined {
  try {
    const input: unknown = JSON.parse(sent);
    return input && typeof input === "object" && !Array.isArray(input) ? (input as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A failure in words for the person; what the provider said has the key redacted (a proxy may echo headers). */
function describe(cause: unknown, partial: (TextBlock | ToolCallBlock)[], apiKey: string): ProviderError {
  if (cause instanceof ProviderError) return new ProviderError(cause.message, cause.kind, partial, cause.retryAfterSeconds);
  const said = (cause as { apiMessage?: string | null })?.apiMessage ?? (cause instanceof Error ? cause.message : String(cause));
  const text = redactKey(said, apiKey);
  // The SDK's errors come only from requests, which load it first.
  const errors = sdk.loaded?.default;
  if ((errors && cause instanceof errors.APIUserAbortError) || (cause instanceof Error && cause.name === "AbortError")) {
    return new ProviderError("Stopped.", "aborted", partial);
  }
  if (errors && (cause instanceof errors.AuthenticationError || cause instanceof errors.PermissionDeniedError)) {
    return new ProviderError("The API key was not accepted. Check it in Settings.", "auth", partial);
  }
  if (errors && cause instanceof errors.NotFoundError) {
    return new ProviderError(`Model not found: ${text}. Choose another model in Settings.`, "model", partial);
  }
  const wait = retryAfter((cause as { headers?: Headers }).headers);
  if (errors && cause instanceof errors.RateLimitError) return new ProviderError(`Rate limited: ${text}`, "rate", partial, wait);
  if (errors && cause instanceof errors.BadRequestError) return new ProviderError(`The request was refused: ${text}`, "invalid", partial);
  if (errors && cause instanceof errors.APIConnectionError) {
    const offline = typeof navigator !== "undefined" && navigator.onLine === false;
    return offline
      ? new ProviderError("You are offline. Your message is saved; retry when you are back online.", "offline", partial)
      : new ProviderError("The connection to the API was lost.", "network", partial);
  }
  const status = (cause as { status?: number })?.status;
  const type = (cause as { type?: string | null })?.type;
  if (status === 529 || type === "overloaded_error") return new ProviderError(`The API is overloaded: ${text}`, "overloaded", partial, wait);
  if (typeof status === "number" && status >= 500) return new ProviderError(`The API failed (${status}): ${text}`, "server", partial, wait);
  if (errors && cause instanceof errors.APIError) return new ProviderError(`The API reported an error: ${text}`, "server", partial);
  return new ProviderError(text, "network", partial);
}
