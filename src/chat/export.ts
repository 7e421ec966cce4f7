import type { MimeBundle } from "../../workers/python-api";
import type { CellRecord, ChatMessage, Conversation } from "../model/conversation";
import { notebookFromConversation } from "../notebook/from-conversation";
import { writeIpynb } from "../notebook/ipynb";

/**
 * Makes what an export carries inert for a reader that trusts it and renders it as it is
 * (Jupyter, VS Code, GitHub): nothing that loads from elsewhere or runs. Kiln itself shows
 * Python's output only in a sandboxed frame. Made in src/components/output-cleaner.ts.
 */
export interface OutputCleaner {
  /** A MIME bundle with normalized keys, only the types Kiln shows, each cleaned. */
  bundle(data: MimeBundle): MimeBundle;
  /** Markdown without remote images, or raw HTML that loads or runs. */
  markdown(text: string): string;
}

const cellsById = (messages: readonly ChatMessage[]) =>
  new Map(messages.flatMap((m) => m.cells ?? []).map((cell) => [cell.toolUseId, cell]));

function outputText(cell: CellRecord, clean: OutputCleaner): string {
  return cell.outputs
    .map((item) => {
      if (item.kind === "stream") return item.text;
      if (item.kind === "value" || item.kind === "display") return `${clean.bundle(item.data)["text/plain"] ?? "[rich output]"}\n`;
      if (item.kind === "error") return `${item.error.traceback || `${item.error.ename}: ${item.error.evalue}`}\n`;
      if (item.kind === "notice") return `[${item.text}]\n`;
      return "";
    })
    .join("");
}

/**
 * The conversation as Markdown: the person's messages, the model's answers (both cleaned), each
 * cell's code and output as text in code blocks.
 */
export function toMarkdown(conversation: Conversation, messages: readonly ChatMessage[], clean: OutputCleaner): string {
  const cells = cellsById(messages);
  const parts = [clean.markdown(`# ${conversation.title}`)];
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "text" && message.role === "user") parts.push(clean.markdown(`**You:** ${block.text}`));
      else if (block.type === "text") parts.push(clean.markdown(block.text));
      else if (block.type === "tool_call") {
        const cell = cells.get(block.id);
        parts.push(fenced(cell?.code ?? "", "python"));
        const output = cell ? outputText(cell, clean).trimEnd() : "";
        if (output) parts.push(fenced(output));
      }
    }
  }
  return `${parts.join("\n\n")}\n`;
}

/**
 * The conversation as a Jupyter notebook file (nbformat 4.5): the notebook **Open as notebook**
 * makes of it (its Python cells with their outputs, its text as Markdown cells), cleaned by `clean`.
 */
export function toNotebook(conversation: Conversation, messages: readonly ChatMessage[], clean: OutputCleaner): string {
  return writeIpynb(notebookFromConversation(conversation, messages, clean.markdown), clean.bundle);
}

/** `title` as the base of a file name: letters and digits of any script are kept, anything else a file name cannot hold becomes a dash. */
export function fileBaseName(title: string, fallback: string): string {
  return (
    title
      .replace(/[^\p{L}\p{N}_-]+/gu, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 40) || fallback
  );
}

/** Offer `text` as a file download. */
export function download(fileName: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** `text` as a Markdown code block whose fence is longer than any run of backticks in it, so it cannot be closed early. */
export function fenced(text: string, language = ""): string {
  // (A loop: spreading every run into Math.max overflows the stack on text with 100 000s of them.)
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${text}\n${fence}`;
}
