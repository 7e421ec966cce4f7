import type { MimeBundle } from "../../workers/python-api";
import { BINARY_TYPES, groupDigits } from "../../workers/output-limits";
import { cleanBundle } from "../components/output-cleaner";
import type { OutputItem } from "../model/output";
import { MAX_RUN_OUTPUTS } from "../runtime/run-owner";
import { capStoredOutputs } from "../storage/output-caps";
import { DEFAULT_SETTINGS } from "../storage/settings";
import { isRecord, NotebookFileError, takeCellId } from "./cells";
import { newNotebook, type CellKind, type Notebook, type NotebookCell } from "./model";
import { isJsonType, nbLines, nbOutputs, type NbJson } from "./nbformat-outputs";

/*
 * Jupyter notebooks (nbformat 4) in and out. A file is hostile input: it is checked, and what it
 * may bring is capped, before anything of it is shown (see docs/notebooks.md, "Files and links").
 */

/** The longest notebook text read (the caller reads at most this much of the file). */
export const MAX_NOTEBOOK_CHARS = 20 * 1024 * 1024;
/** The most cells a notebook may have. */
export const MAX_CELLS = 5000;
/** The deepest a notebook's JSON may nest (metadata, JSON outputs): deeper is refused, not walked. */
export const MAX_JSON_DEPTH = 100;
/** Outputs of a whole notebook shown at most; the rest stay in the file's outputs, written back on download. */
export const MAX_SHOWN_OUTPUTS = 20_000;
/** Text (stdout and stderr) one cell shows at most: as much as one run keeps by default. */
export const CELL_STREAM_CHARS = DEFAULT_SETTINGS.outputLimitKiB * 1024;

const ESC = "\u001b";
/** ANSI escape sequences as terminals and IPython's colored tracebacks write them: CSI, OSC and two-character ones. */
const ANSI = new RegExp(`${ESC}(?:\\[[0-?]*[ -/]*[@-~]|\\][^\\u0007${ESC}]*(?:\\u0007|${ESC}\\\\)?|[@-Z\\\\-_])`, "g");

/** `text` without ANSI escape sequences (colours, cursor moves). */
export const stripAnsi = (text: string): string => text.replace(ANSI, "");

/** A value nbformat holds as text: a string or a list of strings. */
function nbText(value: unknown, what: () => string): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((line) => typeof line === "string")) return value.join("");
  throw new NotebookFileError(`${what()} is neither text nor a list of lines.`);
}

/** The deepest nesting of `value`, walked without recursion, stopping past `limit`. */
function tooDeep(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(item)) if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

/** A bundle of a file as Kiln holds it: text joined, JSON types (and any other non-text value) as JSON text, base64 without line breaks. */
function readBundle(data: NbJson, where: string): MimeBundle {
  const bundle: MimeBundle = {};
  for (const [mime, value] of Object.entries(data)) {
    const type = mime.trim().toLowerCase();
    let text: string;
    if (isJsonType(type) || (typeof value !== "string" && !Array.isArray(value))) text = JSON.stringify(value) ?? "null";
    else text = nbText(value, () => `${where}'s ${mime}`);
    bundle[mime] = BINARY_TYPES.has(type) ? text.replace(/\s+/g, "") : text;
  }
  return bundle;
}

const str = (value: unknown): string => (typeof value === "string" ? value : "");

/** One output of a file as Kiln shows it. */
function readOutput(raw: unknown, where: string): OutputItem {
  if (!isRecord(raw)) throw new NotebookFileError(`${where} is not an output object.`);
  const type = raw.output_type;
  switch (type) {
    case "stream":
      return { kind: "stream", name: raw.name === "stderr" ? "stderr" : "stdout", text: stripAnsi(nbText(raw.text ?? "", () => `${where}'s text`)) };
    case "display_data":
    case "execute_result": {
      if (!isRecord(raw.data)) throw new NotebookFileError(`${where} has no data.`);
      return { kind: type === "display_data" ? "display" : "value", data: readBundle(raw.data, where) };
    }
    case "error": {
      const traceback = raw.traceback ?? [];
      if (!Array.isArray(traceback) || !traceback.every((line) => typeof line === "string")) {
        throw new NotebookFileError(`${where}'s traceback is not a list of lines.`);
      }
      return { kind: "error", error: { ename: stripAnsi(str(raw.ename)), evalue: stripAnsi(str(raw.evalue)), traceback: stripAnsi(traceback.join("\n")) } };
    }
    default:
      if (typeof type !== "string") throw new NotebookFileError(`${where} has no output_type.`);
      return { kind: "notice", tone: "info", text: `An output of type “${type.slice(0, 100)}” that Kiln does not show (it stays in the file).` };
  }
}

/** The outputs of one cell within the limits of a run: at most {@link MAX_RUN_OUTPUTS} rich ones and {@link CELL_STREAM_CHARS} of text. */
function capCellOutputs(items: OutputItem[]): OutputItem[] {
  const kept: OutputItem[] = [];
  let rich = 0;
  let streamRoom = CELL_STREAM_CHARS;
  const notices: string[] = [];
  for (const item of items) {
    if (item.kind === "stream") {
      if (streamRoom <= 0) continue;
      const text = item.text.slice(0, streamRoom);
      streamRoom -= item.text.length;
      kept.push({ ...item, text });
      if (streamRoom < 0) notices.push(`Output truncated: this cell's text in the file is longer than ${groupDigits(CELL_STREAM_CHARS)} characters; the rest is not shown (it stays in the file).`);
    } else if (++rich <= MAX_RUN_OUTPUTS) kept.push(item);
    else if (rich === MAX_RUN_OUTPUTS + 1) notices.push(`Output truncated: this cell has more than ${MAX_RUN_OUTPUTS} outputs in the file; the rest are not shown (they stay in the file).`);
  }
  return capStoredOutputs([...kept, ...notices.map((text): OutputItem => ({ kind: "notice", tone: "warning", text }))]);
}

/** Cell `n` of a file. `shown` counts the outputs shown so far in the notebook. */
function readCell(raw: unknown, n: number, ids: Set<string>, shown: { count: number }): NotebookCell {
  if (!isRecord(raw)) throw new NotebookFileError(`cell ${n} is not a cell object.`);
  const kind = raw.cell_type;
  if (kind !== "code" && kind !== "markdown" && kind !== "raw") {
    if (typeof kind !== "string") throw new NotebookFileError(`cell ${n} has no cell_type.`);
    throw new NotebookFileError(`cell ${n} has the cell_type “${kind.slice(0, 100)}”; a cell is code, markdown or raw.`);
  }
  if (raw.source === undefined) throw new NotebookFileError(`cell ${n} has no source.`);
  const source = nbText(raw.source, () => `cell ${n}'s source`);
  if (raw.metadata !== undefined && !isRecord(raw.metadata)) throw new NotebookFileError(`cell ${n}'s metadata is not an object.`);
  if (raw.attachments !== undefined && !isRecord(raw.attachments)) throw new NotebookFileError(`cell ${n}'s attachments are not an object.`);
  const cell: NotebookCell = {
    id: takeCellId(raw.id, ids),
    kind: kind as CellKind,
    source,
    outputs: [],
    executionCount: null,
    metadata: raw.metadata ?? {},
    ...(raw.attachments && { attachments: raw.attachments }),
  };
  if (kind !== "code") return cell;
  const count = raw.execution_count;
  if (Number.isSafeInteger(count) && (count as number) >= 0) cell.executionCount = count as number;
  const outputs = raw.outputs ?? [];
  if (!Array.isArray(outputs)) throw new NotebookFileError(`cell ${n}'s outputs are not a list.`);
  if (!outputs.length) return cell;
  cell.fileOutputs = outputs;
  const items = capCellOutputs(outputs.map((output, index) => readOutput(output, `cell ${n}, output ${index + 1}`)));
  const room = MAX_SHOWN_OUTPUTS - shown.count;
  cell.outputs = items.length <= room ? items : [
    ...items.slice(0, Math.max(room, 0)),
    { kind: "notice", tone: "warning", text: `Output not shown: this notebook has more than ${groupDigits(MAX_SHOWN_OUTPUTS)} outputs; the rest stay in the file.` },
  ];
  shown.count += items.length;
  return cell;
}

/**
 * A notebook from the text of an `.ipynb` file (nbformat 4.0 to 4.5, and later 4.x, whose changes
 * a 4.5 reader may ignore). Throws a {@link NotebookFileError} saying what is wrong and where.
 */
export function readIpynb(text: string, title: string): Notebook {
  if (text.length > MAX_NOTEBOOK_CHARS) {
    throw new NotebookFileError(`This file is ${groupDigits(text.length)} characters long; Kiln opens notebooks of at most ${groupDigits(MAX_NOTEBOOK_CHARS)}.`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new NotebookFileError(`This file is not a notebook: it is not valid JSON (${(error as Error).message}).`);
  }
  if (!isRecord(doc)) throw new NotebookFileError("This file is not a notebook: it holds JSON, but not a notebook object.");
  const major = doc.nbformat;
  if (typeof major !== "number") throw new NotebookFileError("This file is not a notebook: it has no nbformat version.");
  if (major < 4) {
    throw new NotebookFileError(`This notebook is in nbformat ${major}, an older format Kiln does not read. Open it in Jupyter and save it to convert it to nbformat 4.`);
  }
  if (major !== 4) throw new NotebookFileError(`This notebook is in nbformat ${major}; Kiln reads nbformat 4.`);
  if (!Number.isSafeInteger(doc.nbformat_minor) || (doc.nbformat_minor as number) < 0) {
    throw new NotebookFileError("This notebook has no valid nbformat_minor (the minor version of nbformat 4).");
  }
  if (tooDeep(doc, MAX_JSON_DEPTH)) throw new NotebookFileError(`This notebook's JSON is nested more than ${MAX_JSON_DEPTH} levels deep; Kiln does not open it.`);
  if (doc.metadata !== undefined && !isRecord(doc.metadata)) throw new NotebookFileError("This notebook's metadata is not an object.");
  if (!Array.isArray(doc.cells)) throw new NotebookFileError("This notebook has no list of cells.");
  if (doc.cells.length > MAX_CELLS) {
    throw new NotebookFileError(`This notebook has ${groupDigits(doc.cells.length)} cells; Kiln opens notebooks of at most ${groupDigits(MAX_CELLS)}.`);
  }
  const ids = new Set<string>();
  const shown = { count: 0 };
  const cells = doc.cells.map((cell, index) => {
    try {
      return readCell(cell, index + 1, ids, shown);
    } catch (error) {
      if (error instanceof NotebookFileError && /^cell \d/.test(error.message)) {
        throw new NotebookFileError(`This notebook cannot be opened: ${error.message}`);
      }
      throw error;
    }
  });
  return newNotebook(title, cells, doc.metadata ?? {});
}

/** What Kiln's Python is, for a notebook that does not say. */
const KERNELSPEC = { name: "python3", display_name: "Python 3 (Pyodide)", language: "python" };
const LANGUAGE_INFO = { name: "python" };

/** `value` with every object's keys sorted, as Jupyter writes a notebook (so the same notebook gives the same text). */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedKeys(value[key])]));
}

function writeCell(cell: NotebookCell, cleanOutput: (bundle: MimeBundle) => MimeBundle): NbJson {
  const base: NbJson = { cell_type: cell.kind, id: cell.id, metadata: cell.metadata, source: nbLines(cell.source) };
  if (cell.kind !== "code") return cell.attachments ? { ...base, attachments: cell.attachments } : base;
  const outputs = cell.fileOutputs ?? nbOutputs(cell.outputs, cell.executionCount, cleanOutput);
  return { ...base, execution_count: cell.executionCount, outputs };
}

/**
 * The notebook as an `.ipynb` file (nbformat 4.5), keys sorted and indented by one space as
 * Jupyter writes them. Outputs made in Kiln are cleaned by `cleanOutput` (by default for
 * export); a cell's outputs from its file ({@link NotebookCell.fileOutputs}) are written back
 * as the file had them.
 */
export function writeIpynb(notebook: Notebook, cleanOutput = cleanBundle): string {
  const metadata = { ...notebook.metadata };
  metadata.kernelspec ??= KERNELSPEC;
  metadata.language_info ??= LANGUAGE_INFO;
  const doc = { cells: notebook.cells.map((cell) => writeCell(cell, cleanOutput)), metadata, nbformat: 4, nbformat_minor: 5 };
  return `${JSON.stringify(sortedKeys(doc), null, 1)}\n`;
}
