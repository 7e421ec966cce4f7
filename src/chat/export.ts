import type { MimeBundle } from "../../workers/python-api";
import type { CellRecord, ChatMessage, Conversation } from "../model/conversation";
import { nbLines, nbOutputs } from "../notebook/nbformat-outputs";

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

/** The conversation's Python cells with their outputs, and its text as Markdown cells (nbformat 4). */
export function toNotebook(messages: readonly ChatMessage[], clean: OutputCleaner, pythonVersion = "3"): string {
  const cells = cellsById(messages);
  const notebookCells: Record<string, unknown>[] = [];
  let count = 0;
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "text" && block.text.trim()) {
        const text = message.role === "user" ? `**You:** ${block.text}` : block.text;
        notebookCells.push({ cell_type: "markdown", metadata: {}, source: nbLines(clean.markdown(text)) });
      } else if (block.type === "tool_call") {
        const cell = cells.get(block.id);
        if (!cell) continue;
        count++;
        notebookCells.push({
          cell_type: "code",
          execution_count: count,
          metadata: {},
          source: nbLines(cell.code),
          outputs: nbOutputs(cell.outputs, count, (data) => clean.bundle(data)),
        });
      }
    }
  }
  const notebook = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: { name: "python3", display_name: "Python 3 (ipykernel)", language: "python" },
      language_info: { name: "python", version: pythonVersion },
    },
    cells: notebookCells.map((cell, index) => ({ id: `cell-${index + 1}`, ...cell })),
  };
  return `${JSON.stringify(notebook, null, 1)}\n`;
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
