import type { ChatMessage, ContentBlock } from "./types";

type ApiMessage = { role: "user" | "assistant"; content: ContentBlock[] };

/**
 * The conversation as the Messages API wants it: failed answers left out, a stopped
 * answer's text kept, every tool call answered, roles alternating (consecutive messages
 * of one role are merged).
 */
export function toApiMessages(history: readonly ChatMessage[]): ApiMessage[] {
  const out: ApiMessage[] = [];
  const push = (role: ApiMessage["role"], content: ContentBlock[]) => {
    if (!content.length) return;
    const last = out[out.length - 1];
    if (last?.role === role) last.content = [...last.content, ...content];
    else out.push({ role, content: [...content] });
  };
  const answered = new Set(
    history.flatMap((m) => m.content.flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : []))),
  );
  for (const message of history) {
    if (message.role === "user") {
      push("user", message.content);
      continue;
    }
    if (message.status === "error" || message.status === "streaming") continue;
    const content =
      message.status === "stopped"
        ? message.content.filter((b) => b.type === "text" && b.text.trim())
        : message.content.filter((b) => b.type !== "text" || b.text.trim());
    push("assistant", content);
    // A tool call whose run never finished (a reload, a crash, Stop) is answered as such.
    const missing = content.filter((b) => b.type === "tool_use" && !answered.has(b.id));
    push(
      "user",
      missing.map((b) => ({
        type: "tool_result" as const,
        tool_use_id: (b as { id: string }).id,
        content: [{ type: "text" as const, text: "Not run: the person stopped it or the page was reloaded." }],
        is_error: true,
      })),
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
