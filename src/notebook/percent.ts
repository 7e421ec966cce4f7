import { newCell, newNotebook, type CellKind, type Notebook, type NotebookCell } from "./model";

/*
 * The percent format of `.py` notebooks, as jupytext, VS Code, Spyder and PyCharm write it:
 * `# %%` starts a code cell, `# %% [markdown]` (or `[md]`) a Markdown cell whose lines are
 * comments, `# %% [raw]` a raw cell; text after `# %%` is the cell's title. See docs/notebooks.md.
 */

/** The notebook metadata key holding a jupytext header (the `# ---` YAML block at the top), as its text. */
export const PERCENT_HEADER_KEY = "percent_header";
/** A cell's metadata keys for what its `# %%` line says beside its kind: its title, and jupytext's `key=value` options. */
export const TITLE_KEY = "title";
export const OPTIONS_KEY = "percent_options";

const MARKER = /^#\s?%%(?=\s|$)(.*)$/;
const KIND_TAGS: Record<string, CellKind> = { markdown: "markdown", md: "markdown", raw: "raw" };

/** `lines` without the blank lines at their start and end, joined. */
function trimmedText(lines: string[]): string {
  let start = 0;
  let end = lines.length;
  while (start < end && !lines[start].trim()) start++;
  while (end > start && !lines[end - 1].trim()) end--;
  return lines.slice(start, end).join("\n");
}

/** A comment line's text: `# text` → `text`, `#` → ``; anything else as it is. */
const uncomment = (line: string): string => line.replace(/^# ?/, "");

/** A cell from what its `# %%` line says after the marker, and the lines under it. */
function cellFrom(header: string | undefined, lines: string[]): NotebookCell {
  let kind: CellKind = "code";
  const metadata: Record<string, unknown> = {};
  let title = header?.trim() ?? "";
  const tagged = /^(.*?)\s*\[(\w+)\](.*)$/.exec(title);
  if (tagged && KIND_TAGS[tagged[2].toLowerCase()]) {
    kind = KIND_TAGS[tagged[2].toLowerCase()];
    title = tagged[1];
    if (tagged[3].trim()) metadata[OPTIONS_KEY] = tagged[3].trim();
  }
  if (title) metadata[TITLE_KEY] = title;
  const source = trimmedText(kind === "code" ? lines : lines.map(uncomment));
  return { ...newCell(kind, source), metadata };
}

/** A notebook from a `.py` file in the percent format; a file without `# %%` lines is one code cell. */
export function readPercent(text: string, title: string): Notebook {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const metadata: Record<string, unknown> = {};
  let at = 0;
  if (lines[0]?.trimEnd() === "# ---") {
    const close = lines.findIndex((line, index) => index > 0 && line.trimEnd() === "# ---");
    if (close > 0) {
      metadata[PERCENT_HEADER_KEY] = lines.slice(0, close + 1).join("\n");
      at = close + 1;
    }
  }
  const cells: NotebookCell[] = [];
  let header: string | undefined;
  let body: string[] = [];
  const flush = () => {
    // Text before the first marker is a cell only when it is not blank.
    if (header !== undefined || body.some((line) => line.trim())) cells.push(cellFrom(header, body));
  };
  for (const line of lines.slice(at)) {
    const marker = MARKER.exec(line);
    if (!marker) {
      body.push(line);
      continue;
    }
    flush();
    header = marker[1];
    body = [];
  }
  flush();
  return newNotebook(title, cells, metadata);
}

/** The notebook as a `.py` file in the percent format (outputs are not kept; Markdown and raw cells as comments). */
export function writePercent(notebook: Notebook): string {
  const parts: string[] = [];
  const header = notebook.metadata[PERCENT_HEADER_KEY];
  if (typeof header === "string") parts.push(header);
  for (const cell of notebook.cells) {
    const title = typeof cell.metadata[TITLE_KEY] === "string" ? ` ${cell.metadata[TITLE_KEY]}` : "";
    const options = typeof cell.metadata[OPTIONS_KEY] === "string" ? ` ${cell.metadata[OPTIONS_KEY]}` : "";
    if (cell.kind === "code") {
      parts.push(`# %%${title}${cell.source ? `\n${cell.source}` : ""}`);
      continue;
    }
    const comment = cell.source ? `\n${cell.source.split("\n").map((line) => (line ? `# ${line}` : "#")).join("\n")}` : "";
    parts.push(`# %%${title} [${cell.kind}]${options}${comment}`);
  }
  return parts.length ? `${parts.join("\n\n")}\n` : "";
}
