import type { RunStatus } from "../../workers/python-api";
import type { OutputItem, RanElsewhere } from "./output";

/**
 * Kiln's own conversation model, the same for every provider. Each provider turns it into its
 * wire format and back (src/providers/<name>/).
 */
export type TextBlock = { type: "text"; text: string };
/** Base64 image data. */
export type ImageBlock = { type: "image"; mediaType: string; data: string };
export type ToolCallBlock = {
  type: "tool_call";
  id: string;
  name: string;
  input: unknown;
  /** The arguments as the model sent them, when they were not valid JSON (then `input` is `{}`). */
  invalidInput?: string;
  /** What its provider needs back with it (a signature, its own item id); other providers never see it. */
  meta?: { provider: string; data: unknown };
};
export type ToolResultBlock = {
  type: "tool_result";
  callId: string;
  content: (TextBlock | ImageBlock)[];
  isError?: boolean;
};
/**
 * A block only one provider understands (its reasoning, server tool calls and their results),
 * kept as that provider sent it. It goes back only to that provider; any other gets `text`.
 */
export type ProviderBlock = { type: "provider"; provider: string; data: unknown; text: string };
export type ContentBlock = TextBlock | ImageBlock | ToolCallBlock | ToolResultBlock | ProviderBlock;

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** A model of one provider. */
export interface ModelRef {
  provider: string;
  model: string;
}

/** What running one tool call produced, for the "Python cell" in the page. */
export interface CellRecord {
  toolUseId: string;
  code: string;
  outputs: OutputItem[];
  status: RunStatus | "running";
  durationMs?: number;
  /** Set when the code ran elsewhere than in the browser. */
  ranOn?: RanElsewhere;
}

export type MessageStatus = "streaming" | "done" | "stopped" | "error";

export interface ChatMessage {
  id: string;
  conversationId: string;
  /** Order within the conversation. */
  seq: number;
  role: "user" | "assistant";
  content: ContentBlock[];
  /** Assistant messages: how the answer ended. */
  status?: MessageStatus;
  /** A sentence for the person when status is "error". */
  error?: string;
  /** Something the person should know about an answer that did not fail (a model that wrote code without running it). */
  notice?: string;
  /** Assistant messages: which provider and model wrote it. */
  author?: ModelRef;
  /** User messages that carry tool results: the cells that produced them. */
  cells?: CellRecord[];
  usage?: Usage;
  createdAt: number;
}

/** A conversation's title until its first message names it. */
export const NEW_TITLE = "Untitled conversation";

export interface Conversation {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  usage: Usage;
  /** Whether Python may use the network in this conversation (the person's switch; off when absent). */
  pythonNetwork?: boolean;
  /** The model the next answer comes from; the default model from Settings when absent. */
  model?: ModelRef;
}
