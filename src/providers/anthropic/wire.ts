import type { ContentBlock, TextBlock, ToolCallBlock } from "../../model/conversation";
import type { FinishReason, ToolSpec, TurnMessage } from "../../chat/provider";
import type { ApiBlock, ApiMessage, ApiTool } from "./client";

export const PROVIDER_ID = "anthropic";

/** A neutral block in the Messages API's shape (other providers' blocks arrive here as text already). */
function toApiBlock(block: ContentBlock): ApiBlock {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      return { type: "image", source: { type: "base64", media_type: block.mediaType, data: block.data } };
    case "tool_call":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
    case "tool_result":
      return {
        type: "tool_result",
        tool_use_id: block.callId,
        content: block.content.map(toApiBlock),
        ...(block.isError ? { is_error: true } : {}),
      };
    case "provider":
      return block.data as ApiBlock;
  }
}

export const toApiMessages = (messages: readonly TurnMessage[]): ApiMessage[] =>
  messages.map((message) => ({ role: message.role, content: message.content.map(toApiBlock) }));

export const toApiTool = (tool: ToolSpec): ApiTool => ({ name: tool.name, description: tool.description, input_schema: tool.parameters });

/** A block the API answered with, in the neutral model: text and tool calls as such, the rest kept as Anthropic's. */
export function fromApiBlock(block: ApiBlock): ContentBlock {
  if (block.type === "text") return { type: "text", text: String(block.text ?? "") } satisfies TextBlock;
  if (block.type === "tool_use") {
    return { type: "tool_call", id: String(block.id), name: String(block.name), input: block.input ?? {} } satisfies ToolCallBlock;
  }
  return { type: "provider", provider: PROVIDER_ID, data: block, text: describeBlock(block) };
}

/** A block only Anthropic understands, as plain text for another provider. */
function describeBlock(block: ApiBlock): string {
  if (block.type === "thinking") return "";
  if (block.type === "redacted_thinking") return "";
  return `[Anthropic ${block.type.replace(/_/g, " ")}]`;
}

const FINISH: Record<string, FinishReason> = {
  end_turn: "end",
  stop_sequence: "end",
  tool_use: "tool_calls",
  pause_turn: "continue",
  max_tokens: "max_tokens",
  refusal: "refusal",
};

export const finishReason = (stopReason: string): FinishReason => FINISH[stopReason] ?? "end";
