import { cleanMarkdown } from "../components/output-cleaner";
import type { CellRecord, ChatMessage, Conversation } from "../model/conversation";
import { newCell, newNotebook, type Notebook, type NotebookCell } from "./model";

/** The person's message as a Markdown quote, headed so: `> text` on every line. */
const quoted = (text: string): string => `**You asked:**\n\n${text.split("\n").map((line) => (line ? `> ${line}` : ">")).join("\n")}`;

/**
 * A notebook of a conversation, to carry on by hand: each Python cell the model ran, in order,
 * with its outputs and execution counts 1, 2, 3…; the person's messages as quoted Markdown and
 * the model's text as Markdown between them, cleaned by `cleanText` (by default as exports are,
 * since the model's text is not trusted). A call that never ran (no record of it) is left out.
 */
export function notebookFromConversation(conversation: Conversation, messages: readonly ChatMessage[], cleanText = cleanMarkdown): Notebook {
  const records = new Map<string, CellRecord>(messages.flatMap((message) => message.cells ?? []).map((cell) => [cell.toolUseId, cell]));
  const cells: NotebookCell[] = [];
  let count = 0;
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "text" && block.text.trim()) {
        cells.push(newCell("markdown", cleanText(message.role === "user" ? quoted(block.text.trim()) : block.text.trim())));
      } else if (block.type === "tool_call") {
        const record = records.get(block.id);
        if (!record) continue;
        cells.push({ ...newCell("code", record.code), outputs: [...record.outputs], executionCount: ++count });
      }
    }
  }
  return newNotebook(conversation.title, cells);
}
