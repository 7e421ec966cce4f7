import type { ChatMessage, ContentBlock } from "../model/conversation";
import type { TurnMessage } from "./provider";

/** A block as `provider` receives it: another provider's own blocks become plain text (or go). */
function forProvider(block: ContentBlock, provider: string): ContentBlock | undefined {
  if (block.type !== "provider" || block.provider === provider) return block;
  return block.text.trim() ? { type: "text", text: block.text } : undefined;
}

/**
 * The conversation as `provider` receives it: failed answers left out, a stopped answer's
 * text kept, every tool call answered, roles alternating (consecutive messages of one role
 * are merged), and other providers' blocks as plain text.
 */
export function toTurnMessages(history: readonly ChatMessage[], provider: string): TurnMessage[] {
  const out: TurnMessage[] = [];
  const push = (role: TurnMessage["role"], content: ContentBlock[]) => {
    if (!content.length) return;
    const last = out[out.length - 1];
    if (last?.role === role) last.content = [...last.content, ...content];
    else out.push({ role, content: [...content] });
  };
  const answered = new Set(history.flatMap((m) => m.content.flatMap((b) => (b.type === "tool_result" ? [b.callId] : []))));
  for (const message of history) {
    const content = message.content.flatMap((b) => forProvider(b, provider) ?? []);
    if (message.role === "user") {
      push("user", content);
      continue;
    }
    if (message.status === "error" || message.status === "streaming") continue;
    const kept =
      message.status === "stopped"
        ? content.filter((b) => b.type === "text" && b.text.trim())
        : content.filter((b) => b.type !== "text" || b.text.trim());
    push("assistant", kept);
    // A tool call whose run never finished (a reload, a crash, Stop) is answered as such.
    push(
      "user",
      kept.flatMap((b) =>
        b.type === "tool_call" && !answered.has(b.id)
          ? [
              {
                type: "tool_result" as const,
                callId: b.id,
                content: [{ type: "text" as const, text: "Not run: the person stopped it or the page was reloaded." }],
                isError: true,
              },
            ]
          : [],
      ),
    );
  }
  // Tool results must directly follow their tool calls: move a person's text after them.
  for (const message of out) {
    if (message.role === "user") {
      message.content = [
        ...message.content.filter((b) => b.type === "tool_result"),
        ...message.content.filter((b) => b.type !== "tool_result"),
      ];
    }
  }
  return out;
}
