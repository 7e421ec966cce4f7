import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { ContentBlock, ImageBlock } from "../../model/conversation";
import type { ToolSpec, TurnMessage } from "../../chat/provider";

export const PROVIDER_ID = "openai-compatible";

const dataUrl = (image: ImageBlock) => `data:${image.mediaType};base64,${image.data}`;
const textOf = (blocks: readonly ContentBlock[]) =>
  blocks.flatMap((b) => (b.type === "text" ? [b.text] : b.type === "provider" && b.text ? [b.text] : [])).join("\n\n");

/**
 * The conversation in Chat Completions' shape: a system message, the person's text and images,
 * assistant text with `tool_calls`, one `tool` message per result. Images from a tool follow its
 * results as a user message (a `tool` message takes text only).
 */
export function toChatMessages(system: string, messages: readonly TurnMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [{ role: "system", content: system }];
  for (const message of messages) {
    if (message.role === "assistant") {
      const calls = message.content.flatMap((b) => (b.type === "tool_call" ? [b] : []));
      const text = textOf(message.content);
      out.push({
        role: "assistant",
        content: text || null,
        ...(calls.length
          ? {
              tool_calls: calls.map((call) => ({
                id: call.id,
                type: "function" as const,
                function: { name: call.name, arguments: call.invalidInput ?? JSON.stringify(call.input) },
              })),
            }
          : {}),
      });
      continue;
    }
    const images: ImageBlock[] = [];
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      out.push({ role: "tool", tool_call_id: block.callId, content: textOf(block.content) || "(no output)" });
      images.push(...block.content.filter((b): b is ImageBlock => b.type === "image"));
    }
    const parts: ChatCompletionContentPart[] = [];
    if (images.length) parts.push({ type: "text", text: `Images from the python tool (${images.length}):` });
    for (const image of images) parts.push({ type: "image_url", image_url: { url: dataUrl(image) } });
    const own = message.content.filter((b) => b.type !== "tool_result");
    const text = textOf(own);
    if (text) parts.push({ type: "text", text });
    for (const image of own.filter((b): b is ImageBlock => b.type === "image")) parts.push({ type: "image_url", image_url: { url: dataUrl(image) } });
    if (!parts.length) continue;
    // Plain text stays a string: servers that take only strings read it too.
    out.push({ role: "user", content: parts.length === 1 && parts[0].type === "text" ? parts[0].text : parts });
  }
  return out;
}

export const toChatTool = (tool: ToolSpec): ChatCompletionTool => ({
  type: "function",
  function: { name: tool.name, description: tool.description, parameters: tool.parameters },
});
