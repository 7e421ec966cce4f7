import type { ContentBlock, TextBlock, ToolCallBlock, Usage } from "../model/conversation";
import type { ExecutionBackend } from "../execution/backend";
import type { ProviderConfig } from "../storage/settings";

/** The conversation as a provider receives it: roles alternate, every tool call is answered. */
export interface TurnMessage {
  role: "user" | "assistant";
  content: ContentBlock[];
}

/** A tool the model may call, with a JSON Schema for its input. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: { type: "object"; properties: Record<string, unknown>; required?: string[] };
}

/** What a provider streams while one assistant turn is written. */
export type TurnEvent =
  | { type: "text"; index: number; text: string }
  | { type: "block"; index: number; block: TextBlock | ToolCallBlock }
  | { type: "retry"; attempt: number; delayMs: number; reason: string };

export interface TurnRequest {
  model: string;
  system: string;
  messages: TurnMessage[];
  tools: ToolSpec[];
  maxTokens: number;
  signal: AbortSignal;
  onEvent: (event: TurnEvent) => void;
}

/**
 * How a turn ended: `tool_calls` wants the results of its tool calls, `continue` wants the
 * same request again with this answer added (a paused server-side turn).
 */
export type FinishReason = "end" | "tool_calls" | "continue" | "max_tokens" | "refusal";

export interface TurnReply {
  /** Text, tool calls, and the provider's own blocks, in order. */
  content: ContentBlock[];
  finish: FinishReason;
  /** The provider's own word for how the answer ended, when it is not a plain end (Gemini's `SAFETY`). */
  finishDetail?: string;
  usage: Usage;
}

export type ProviderErrorKind = "auth" | "model" | "rate" | "overloaded" | "server" | "invalid" | "network" | "offline" | "aborted";

/** A failure the person should read: what happened and what to do. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly kind: ProviderErrorKind,
    /** What was streamed before the failure. */
    readonly partial: (TextBlock | ToolCallBlock)[] = [],
    /** Seconds the server asked to wait before retrying (`retry-after`). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** A provider's SDK: `load()` on each request, `loaded` once one has loaded it. */
export interface LazySdk<T> {
  load(): Promise<T>;
  readonly loaded: T | undefined;
}

/**
 * A provider's SDK, loaded by its first request (a page that makes none, such as the
 * Playground, never evaluates it). A load that fails (offline before the app was ever stored,
 * or a new version has replaced it) says so, and the next request tries again.
 */
export function lazySdk<T>(importer: () => Promise<T>): LazySdk<T> {
  let module: T | undefined;
  return {
    async load() {
      try {
        return (module ??= await importer());
      } catch {
        throw new ProviderError("Could not load the code that talks to this provider. Check the connection, then reload the page.", "network");
      }
    },
    get loaded() {
      return module;
    },
  };
}

/** One model provider, set up with the person's key and Base URL. */
export interface Provider {
  readonly id: string;
  /** Its name for the person: "Anthropic". */
  readonly label: string;
  /**
   * Stream one assistant turn. Rate limits, overloads and server errors that streamed nothing
   * are retried (told as `retry` events); other failures are {@link ProviderError}s.
   */
  streamTurn(request: TurnRequest): Promise<TurnReply>;
  /** Model ids it offers. */
  listModels(signal?: AbortSignal): Promise<string[]>;
  /** Its server-side code execution, when it has one. */
  readonly sandbox?: ExecutionBackend;
}

/** What Settings and the model picker need to know of a provider, before it is set up. */
export interface ProviderKind {
  readonly id: string;
  readonly label: string;
  readonly defaultBaseUrl: string;
  readonly defaultModel: string;
  /** Placeholder of its key field. */
  readonly keyHint: string;
  /** Whether it works without a key (local servers). */
  readonly keyOptional: boolean;
  /** Its code sandbox's name ("Anthropic's sandbox"), and the tool versions one can choose, newest first; absent: no sandbox. */
  readonly sandbox?: { label: string; tools: readonly string[] };
  /** Whether the person has set it up enough to use it. */
  configured(config: ProviderConfig): boolean;
  create(config: ProviderConfig, sandboxStore: SandboxStore): Provider;
}

/** Where a sandbox keeps its record (container, uploads) for one scope. */
export interface SandboxStore {
  load(): Promise<Record<string, unknown> | undefined>;
  save(record: Record<string, unknown>): Promise<void>;
}

/** `text` with every copy of the API key replaced, for messages built from what a provider said. */
export function redactKey(text: string, key: string): string {
  const trimmed = key.trim();
  if (!trimmed) return text;
  return [trimmed, encodeURIComponent(trimmed)].reduce((result, copy) => result.split(copy).join("[API key]"), text);
}
