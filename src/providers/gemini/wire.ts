import type { Content, FunctionDeclaration, Part } from "@google/genai";
import type { ContentBlock, ToolCallBlock } from "../../model/conversation";
import type { ToolSpec, TurnMessage } from "../../chat/provider";

export const PROVIDER_ID = "gemini";

/** What a function call needs back: its thought signature, and its id when Gemini gave one. */
export interface CallMeta {
  id?: string;
  thoughtSignature?: string;
}

const callMeta = (block: ToolCallBlock): CallMeta =>
  block.meta?.provider === PROVIDER_ID ? (block.meta.data as CallMeta) : {};

/**
 * The conversation as Gemini contents: roles `user` and `model`, function calls with their
 * thought signatures, each result as a `functionResponse` named after its call, images inline.
 */
export function toContents(messages: readonly TurnMessage[]): Content[] {
  const names = new Map<string, ToolCallBlock>();
  for (const message of messages) for (const b of message.content) if (b.type === "tool_call") names.set(b.id, b);
  return messages.map((message) => ({
    role: message.role === "assistant" ? "model" : "user",
    parts: message.content.flatMap((block): Part[] => toParts(block, names)),
  }));
}

function toParts(block: ContentBlock, calls: Map<string, ToolCallBlock>): Part[] {
  switch (block.type) {
    case "text":
      return block.text ? [{ text: block.text }] : [];
    case "image":
      return [{ inlineData: { mimeType: block.mediaType, data: block.data } }];
    case "provider":
      return [block.data as Part];
    case "tool_call": {
      const meta = callMeta(block);
      const args = (block.input && typeof block.input === "object" ? block.input : {}) as Record<string, unknown>;
      return [
        {
          functionCall: { name: block.name, args, ...(meta.id ? { id: meta.id } : {}) },
          ...(meta.thoughtSignature ? { thoughtSignature: meta.thoughtSignature } : {}),
        },
      ];
    }
    case "tool_result": {
      const call = calls.get(block.callId);
      const meta = call ? callMeta(call) : {};
      const text = block.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
      const images = block.content.flatMap((b): Part[] => (b.type === "image" ? [{ inlineData: { mimeType: b.mediaType, data: b.data } }] : []));
      return [
        { functionResponse: { name: call?.name ?? "python", ...(meta.id ? { id: meta.id } : {}), response: block.isError ? { error: text } : { output: text } } },
        ...images,
      ];
    }
  }
}

export const toDeclaration = (tool: ToolSpec): FunctionDeclaration => ({
  name: tool.name,
  description: tool.description,
  parametersJsonSchema: tool.parameters,
});

let calls = 0;

/** A streamed function call part as a block. */
export function fromFunctionCall(part: Part): ToolCallBlock {
  const call = part.functionCall!;
  const meta: CallMeta = { ...(call.id ? { id: call.id } : {}), ...(part.thoughtSignature ? { thoughtSignature: part.thoughtSignature } : {}) };
  return {
    type: "tool_call",
    // Gemini API calls often come without an id: one is made up for Kiln's own use, never sent.
    id: call.id ?? `gemini_call_${Date.now().toString(36)}_${++calls}`,
    name: call.name ?? "",
    input: call.args ?? {},
    meta: { provider: PROVIDER_ID, data: meta },
  };
}
