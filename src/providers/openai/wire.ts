import type { ResponseInputItem, ResponseOutputItem, FunctionTool } from "openai/resources/responses/responses";
import type { ContentBlock, ImageBlock, TextBlock, ToolCallBlock } from "../../model/conversation";
import type { ToolSpec, TurnMessage } from "../../chat/provider";

export const PROVIDER_ID = "openai";

const dataUrl = (image: ImageBlock) => `data:${image.mediaType};base64,${image.data}`;

/**
 * The conversation as Responses API input items, sent whole each turn (`store: false`): messages,
 * `function_call` and `function_call_output` items, and this provider's reasoning items as they came.
 */
export function toInputItems(messages: readonly TurnMessage[]): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  for (const message of messages) {
    const parts: ({ type: "input_text"; text: string } | { type: "input_image"; image_url: string; detail: "auto" })[] = [];
    const flush = () => {
      if (!parts.length) return;
      if (message.role === "user") items.push({ role: "user", content: [...parts] });
      else items.push({ role: "assistant", content: parts.map((p) => (p.type === "input_text" ? p.text : "")).join("\n\n") });
      parts.length = 0;
    };
    for (const block of message.content) {
      switch (block.type) {
        case "text":
          if (block.text) parts.push({ type: "input_text", text: block.text });
          break;
        case "image":
          if (message.role === "user") parts.push({ type: "input_image", image_url: dataUrl(block), detail: "auto" });
          break;
        case "provider":
          flush();
          items.push(block.data as ResponseInputItem);
          break;
        case "tool_call":
          flush();
          items.push({ type: "function_call", call_id: block.id, name: block.name, arguments: block.invalidInput ?? JSON.stringify(block.input) });
          break;
        case "tool_result": {
          flush();
          const images = block.content.filter((b): b is ImageBlock => b.type === "image");
          const text = block.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
          items.push({
            type: "function_call_output",
            call_id: block.callId,
            output: images.length
              ? [{ type: "input_text", text }, ...images.map((image) => ({ type: "input_image" as const, image_url: dataUrl(image), detail: "auto" as const }))]
              : text,
          });
          break;
        }
      }
    }
    flush();
  }
  return items;
}

export const toFunctionTool = (tool: ToolSpec): FunctionTool => ({
  type: "function",
  name: tool.name,
  description: tool.description,
  parameters: tool.parameters,
  strict: false,
});

/** An output item in the neutral model: text and function calls as such, reasoning kept as OpenAI's. */
export function fromOutputItem(item: ResponseOutputItem): ContentBlock | undefined {
  if (item.type === "message") {
    const text = item.content.map((part) => (part.type === "output_text" ? part.text : part.refusal)).join("");
    return { type: "text", text } satisfies TextBlock;
  }
  if (item.type === "function_call") return functionCall(item.call_id, item.name, item.arguments);
  if (item.type === "reasoning") {
    const summary = item.summary.map((part) => part.text).join("\n");
    // Sent back as it came, with its encrypted content: nothing is kept on OpenAI's side (store: false).
    return { type: "provider", provider: PROVIDER_ID, data: item, text: summary ? `(Reasoning: ${summary})` : "" };
  }
  return undefined;
}

/** A function call's block: its arguments parsed, or kept as sent when they are not a JSON object. */
export function functionCall(callId: string, name: string, args: string): ToolCallBlock {
  try {
    const input: unknown = JSON.parse(args || "{}");
    if (input && typeof input === "object" && !Array.isArray(input)) return { type: "tool_call", id: callId, name, input };
  } catch {
    // Kept as sent, below.
  }
  return { type: "tool_call", id: callId, name, input: {}, invalidInput: args };
}
