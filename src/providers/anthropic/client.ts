import Anthropic, { toFile } from "@anthropic-ai/sdk";
import type { ContentBlock, ProviderEvent, ProviderReply, TextBlock, ToolUseBlock, Usage } from "../../chat/types";
import { checkApiBaseUrl } from "../../storage/settings";

export const DEFAULT_BASE_URL = "https://api.anthropic.com";


export interface ProviderSettings {
  apiKey: string;
  baseUrl: string;
  model: string;
  maxTokens: number;
}

export interface ToolSpec {
  name: string;
  description: string;
  input_schema: { type: "object"; properties: Record<string, unknown>; required?: string[] };
}

/** Any content block in the API's own shape (server tool calls and their results, uploads). */
export type ApiBlock = { type: string } & Record<string, unknown>;

export interface StreamRequest {
  system: string;
  messages: { role: "user" | "assistant"; content: (ContentBlock | ApiBlock)[] }[];
  /** Client tools, or server tools such as `{type: "code_execution_20260521", name: "code_execution"}`. */
  tools: (ToolSpec | ApiBlock)[];
  /** The code execution container to reuse. */
  container?: string;
  signal: AbortSignal;
  onEvent: (event: ProviderEvent) => void;
}

/** A failure the person should read: what happened and what to do. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly kind: "auth" | "model" | "rate" | "overloaded" | "network" | "offline" | "aborted" | "invalid" | "server",
    /** What was streamed before the failure. */
    readonly partial: (TextBlock | ToolUseBlock)[] = [],
  ) {
    super(message);
  }
}

const RETRY_DELAYS_MS = [1000, 2000, 4000, 8000];

/** `text` with every copy of the API key replaced, for messages built from what the provider said. */
export function redactKey(text: string, key: string): string {
  const trimmed = key.trim();
  if (!trimmed) return text;
  return [trimmed, encodeURIComponent(trimmed)].reduce((result, copy) => result.split(copy).join("[API key]"), text);
}

function client(settings: ProviderSettings): Anthropic {
  // Checked right before the key is handed over: a bad stored Base URL fails here instead of getting the key.
  const baseUrl = checkApiBaseUrl(settings.baseUrl.trim() || DEFAULT_BASE_URL);
  if (!baseUrl.ok) throw new ProviderError(`${baseUrl.message} Fix it in Settings.`, "invalid");
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
    const page = await client(settings).models.list({ limit: 100 });
    return page.data.map((model) => model.id);
  } catch (error) {
    throw describe(error, [], settings.apiKey);
  }
}

/** Upload a file with the Files API; returns its id. */
export async function uploadFile(settings: ProviderSettings, name: string, data: Uint8Array, signal?: AbortSignal): Promise<string> {
  try {
    const file = await client(settings).files.upload({ file: await toFile(data, name) }, { signal });
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
    const api = client(settings);
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
export async function streamMessage(settings: ProviderSettings, request: StreamRequest): Promise<ProviderReply> {
  for (let attempt = 0; ; attempt++) {
    const partial: (TextBlock | ToolUseBlock)[] = [];
    try {
      return await streamOnce(settings, request, partial);
    } catch (cause) {
      const error = describe(cause, partial, settings.apiKey);
      const retriable = (error.kind === "rate" || error.kind === "overloaded" || error.kind === "server") && !partial.length;
      if (!retriable || attempt >= RETRY_DELAYS_MS.length || request.signal.aborted) throw error;
      const header = (cause as { headers?: Headers }).headers?.get?.("retry-after");
      const retryAfter = header ? Number(header) : NaN;
      const delayMs = Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter * 1000 : RETRY_DELAYS_MS[attempt];
      request.onEvent({ type: "retry", attempt: attempt + 1, delayMs, reason: error.message });
      await sleep(delayMs, request.signal);
    }
  }
}

async function streamOnce(
  settings: ProviderSettings,
  request: StreamRequest,
  blocks: (TextBlock | ToolUseBlock)[],
): Promise<ProviderReply> {
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let stopReason = "end_turn";
  let complete = false;
  let container: ProviderReply["container"];
  const json: string[] = [];
  /** Every block in order, in the API's shape, as a `pause_turn` continuation must send them back. */
  const raw: ApiBlock[] = [];
  const stream = await client(settings).messages.create(
    {
      model: settings.model,
      max_tokens: settings.maxTokens,
      system: request.system,
      messages: request.messages as Anthropic.MessageParam[],
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
        if (block.type === "text") blocks[event.index] = { type: "text", text: block.text };
        else if (block.type === "tool_use") blocks[event.index] = { type: "tool_use", id: block.id, name: block.name, input: {} };
        raw[event.index] = { ...(block as unknown as ApiBlock) };
        json[event.index] = "";
        break;
      }
      case "content_block_delta": {
        const block = blocks[event.index];
        if (event.delta.type === "text_delta" && block?.type === "text") {
          block.text += event.delta.text;
          request.onEvent({ type: "text", index: event.index, text: event.delta.text });
        } else if (event.delta.type === "input_json_delta") {
          json[event.index] += event.delta.partial_json;
        }
        break;
      }
      case "content_block_stop": {
        const block = blocks[event.index];
        const input: unknown = json[event.index] ? JSON.parse(json[event.index]) : undefined;
        if (block?.type === "tool_use") block.input = input ?? {};
        const whole = raw[event.index];
        if (whole?.type === "text" && block?.type === "text") whole.text = block.text;
        else if (whole && input !== undefined) whole.input = input;
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
  if (request.signal.aborted) throw new ProviderError("Stopped.", "aborted", blocks.filter(Boolean));
  if (!complete) throw new ProviderError("The connection to the API was lost mid-answer.", "network", blocks.filter(Boolean));
  return { content: blocks.filter(Boolean), blocks: raw.filter(Boolean), stopReason, usage, ...(container ? { container } : {}) };
}

/** A failure in words for the person; what the provider said has the key redacted (a proxy may echo headers). */
function describe(cause: unknown, partial: (TextBlock | ToolUseBlock)[], apiKey: string): ProviderError {
  if (cause instanceof ProviderError) return cause;
  const said = (cause as { apiMessage?: string | null })?.apiMessage ?? (cause instanceof Error ? cause.message : String(cause));
  const text = redactKey(said, apiKey);
  if (cause instanceof Anthropic.APIUserAbortError || (cause instanceof Error && cause.name === "AbortError")) {
    return new ProviderError("Stopped.", "aborted", partial);
  }
  if (cause instanceof Anthropic.AuthenticationError || cause instanceof Anthropic.PermissionDeniedError) {
    return new ProviderError("The API key was not accepted. Check it in Settings.", "auth", partial);
  }
  if (cause instanceof Anthropic.NotFoundError) {
    return new ProviderError(`Model not found: ${text}. Choose another model in Settings.`, "model", partial);
  }
  if (cause instanceof Anthropic.RateLimitError) return new ProviderError(`Rate limited: ${text}`, "rate", partial);
  if (cause instanceof Anthropic.BadRequestError) return new ProviderError(`The request was refused: ${text}`, "invalid", partial);
  if (cause instanceof Anthropic.APIConnectionError) {
    const offline = typeof navigator !== "undefined" && navigator.onLine === false;
    return offline
      ? new ProviderError("You are offline. Your message is saved; retry when you are back online.", "offline", partial)
      : new ProviderError("The connection to the API was lost.", "network", partial);
  }
  const status = (cause as { status?: number })?.status;
  const type = (cause as { type?: string | null })?.type;
  if (status === 529 || type === "overloaded_error") return new ProviderError(`The API is overloaded: ${text}`, "overloaded", partial);
  if (typeof status === "number" && status >= 500) return new ProviderError(`The API failed (${status}): ${text}`, "server", partial);
  if (cause instanceof Anthropic.APIError) return new ProviderError(`The API reported an error: ${text}`, "server", partial);
  return new ProviderError(text, "network", partial);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new ProviderError("Stopped.", "aborted"));
    });
  });
}
