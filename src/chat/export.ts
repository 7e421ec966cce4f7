import type { MimeBundle } from "../../workers/python-api";
import type { CellRecord, ChatMessage, Conversation } from "../model/conversation";

const cellsById = (messages: readonly ChatMessage[]) =>
  new Map(messages.flatMap((m) => m.cells ?? []).map((cell) => [cell.toolUseId, cell]));

function outputText(cell: CellRecord): string {
  return cell.outputs
    .map((item) => {
      if (item.kind === "stream") return item.text;
      if (item.kind === "value" || item.kind === "display") return `${item.data["text/plain"] ?? "[rich output]"}\n`;
      if (item.kind === "error") return `${item.error.traceback || `${item.error.ename}: ${item.error.evalue}`}\n`;
      if (item.kind === "notice") return `[${item.text}]\n`;
      return "";
    })
    .join("");
}

/** The conversation as Markdown: the person's messages, the model's answers, each cell's code and output. */
export function toMarkdown(conversation: Conversation, messages: readonly ChatMessage[]): string {
  const cells = cellsById(messages);
  const parts = [`# ${conversation.title}`];
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "text" && message.role === "user") parts.push(`**You:** ${block.text}`);
      else if (block.type === "text") parts.push(block.text);
      else if (block.type === "tool_call") {
        const cell = cells.get(block.id);
        parts.push(fenced(cell?.code ?? "", "python"));
        const output = cell ? outputText(cell).trimEnd() : "";
        if (output) parts.push(fenced(output));
      }
    }
  }
  return `${parts.join("\n\n")}\n`;
}

const lines = (text: string) => text.split(/(?<=\n)/);

type NotebookOutput = Record<string, unknown>;

/**
 * Makes Python's HTML and SVG safe for a notebook reader that renders them as they are (one
 * that trusts the notebook): no script, event handler or `javascript:` link. Kiln itself shows
 * them only in a sandboxed frame.
 */
export interface OutputCleaner {
  html(html: string): string;
  svg(svg: string): string;
}

function notebookOutputs(cell: CellRecord, count: number, clean: OutputCleaner): NotebookOutput[] {
  const outputs: NotebookOutput[] = [];
  const bundle = (data: MimeBundle) =>
    Object.fromEntries(
      Object.entries(data).flatMap(([mime, value]): [string, string | string[]][] => {
        // Code for the reader to run (Jupyter's `application/javascript`) is left out.
        if (/javascript|ecmascript/i.test(mime)) return [];
        if (mime === "text/html") return [[mime, lines(clean.html(value))]];
        if (mime === "image/svg+xml") return [[mime, lines(clean.svg(value))]];
        return [[mime, mime.startsWith("image/") ? value : lines(value)]];
      }),
    );
  for (const item of cell.outputs) {
    if (item.kind === "stream") outputs.push({ output_type: "stream", name: item.name, text: lines(item.text) });
    else if (item.kind === "display") outputs.push({ output_type: "display_data", data: bundle(item.data), metadata: {} });
    else if (item.kind === "value") {
      outputs.push({ output_type: "execute_result", data: bundle(item.data), metadata: {}, execution_count: count });
    } else if (item.kind === "error") {
      outputs.push({
        output_type: "error",
        ename: item.error.ename,
        evalue: item.error.evalue,
        traceback: item.error.traceback.split("\n"),
      });
    } else if (item.kind === "notice") {
      outputs.push({ output_type: "stream", name: "stderr", text: [`${item.text}\n`] });
    }
  }
  return outputs;
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
        notebookCells.push({ cell_type: "markdown", metadata: {}, source: lines(text) });
      } else if (block.type === "tool_call") {
        const cell = cells.get(block.id);
        if (!cell) continue;
        count++;
        notebookCells.push({
          cell_type: "code",
          execution_count: count,
          metadata: {},
          source: lines(cell.code),
          outputs: notebookOutputs(cell, count, clean),
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
function fenced(text: string, language = ""): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${text}\n${fence}`;
}
