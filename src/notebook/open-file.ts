import { groupDigits } from "../../workers/output-limits";
import { NotebookFileError } from "./cells";
import { MAX_CELLS, MAX_NOTEBOOK_CHARS, readIpynb } from "./ipynb";
import type { Notebook } from "./model";
import { readPercent } from "./percent";

/** The kinds of file the Playground opens as a notebook, as a file chooser's `accept`. */
export const NOTEBOOK_FILE_TYPES = ".ipynb,.py";

const EXTENSION = /\.(ipynb|py)$/i;

/** Whether `name` is a Jupyter notebook or a percent-format Python file, by its extension. */
export const isNotebookFile = (name: string): boolean => EXTENSION.test(name);

/** A notebook's title from its file's name: the name without its extension. */
export const titleFromFileName = (name: string): string => name.replace(EXTENSION, "").trim() || "Untitled notebook";

/** What `openNotebookFile` needs of a file: a browser `File` has it. */
export interface NotebookFile {
  name: string;
  size: number;
  text(): Promise<string>;
}

/**
 * The notebook in `file` (`.ipynb`: nbformat 4; `.py`: the percent format), titled by its name.
 * A file larger than {@link MAX_NOTEBOOK_CHARS} bytes is refused before it is read. Throws a
 * {@link NotebookFileError} whose message says, in words, what is wrong.
 */
export async function openNotebookFile(file: NotebookFile): Promise<Notebook> {
  const name = file.name.slice(0, 200);
  if (!isNotebookFile(file.name)) throw new NotebookFileError(`“${name}” is not a notebook: Kiln opens Jupyter notebooks (.ipynb) and percent-format Python files (.py).`);
  if (file.size > MAX_NOTEBOOK_CHARS) {
    throw new NotebookFileError(`“${name}” is ${groupDigits(file.size)} bytes; Kiln opens notebooks of at most ${groupDigits(MAX_NOTEBOOK_CHARS)} bytes (20 MiB).`);
  }
  let text: string;
  try {
    text = await file.text();
  } catch (error) {
    throw new NotebookFileError(`“${name}” could not be read (${error instanceof Error ? error.message : String(error)}).`);
  }
  const title = titleFromFileName(file.name);
  if (/\.ipynb$/i.test(file.name)) return readIpynb(text, title);
  const notebook = readPercent(text, title);
  if (notebook.cells.length > MAX_CELLS) {
    throw new NotebookFileError(`“${name}” has ${groupDigits(notebook.cells.length)} cells; Kiln opens notebooks of at most ${groupDigits(MAX_CELLS)}.`);
  }
  return notebook;
}
