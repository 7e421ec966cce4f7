import type { OutputItem } from "../runtime/output-model";
import type { RunStatus, SandboxInfo } from "../../workers/python-api";

/** Content of a conversation, in the Messages API's shape (Kiln's own copy of it). */
export type TextBlock = { type: "text"; text: string };
export type ImageBlock = { type: "image"; source: { type: "base64"; media_type: string; data: string } };
export type ToolUseBlock = { type: "tool_use"; id: string; name: string; input: unknown };
export type ToolResultBlock = {
  type: "tool_result";
  tool_use_id: string;
  content: (TextBlock | ImageBlock)[];
  is_error?: boolean;
};
export type ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock;

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** What running one tool call produced, for the "Python cell" in the page. */
export interface CellRecord {
  toolUseId: string;
  code: string;
  outputs: OutputItem[];
  status: RunStatus | "running";
  durationMs?: number;
  /** Set when the code ran on Anthropic's sandbox instead of in the browser. */
  sandbox?: SandboxInfo;
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
}

/** What the model provider streams, in Kiln's words. */
export type ProviderEvent =
  | { type: "text"; index: number; text: string }
  | { type: "block"; index: number; block: TextBlock | ToolUseBlock }
  | { type: "retry"; attempt: number; delayMs: number; reason: string };

export type StopReason = "end_turn" | "tool_use" | "pause_turn" | "max_tokens" | "stop_sequence" | "refusal" | string;

export interface ProviderReply {
  /** The text and client tool calls. */
  content: (TextBlock | ToolUseBlock)[];
  /** Every block in the API's own shape, server tool calls and results included. */
  blocks: ({ type: string } & Record<string, unknown>)[];
  stopReason: StopReason;
  usage: Usage;
  /** The code execution container the answer used. */
  container?: { id: string; expiresAt: string };
}
