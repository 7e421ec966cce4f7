/**
 * The Playground's notebooks in IndexedDB (see docs/notebooks.md). A notebook's record holds
 * its title, metadata and cells (everything but outputs); each cell's outputs are saved on their
 * own, in parts, under `[notebook id, cell id, n]`, and the outputs a file brought under
 * `[notebook id, cell id, -1]`: typing in a cell rewrites a small record, a run writes only its
 * cell's output, and megabytes of output are never copied in one task.
 */
import type { OutputItem } from "../model/output";
import type { Notebook, NotebookCell } from "../notebook/model";
import type { SessionSnapshot } from "../../workers/python-api";
import { capStoredOutputs } from "./output-caps";
import { interpreterStateRange, loadInterpreterState, saveInterpreterState } from "./conversations";
import { openAppDb, type StoredNotebook } from "./db";

/** A notebook's scope: its interpreter, files and sandbox are keyed by it. */
export const notebookScope = (id: string) => `notebook:${id}`;

export interface NotebookSummary {
  id: string;
  title: string;
  updatedAt: number;
  cells: number;
}

/**
 * Output is saved in parts of about this many characters: IndexedDB copies a value on the
 * page's main thread when it is put and when it is read, and one put of a flood's 7 MB of
 * output held the page up for 120–240 ms on a 2-core machine, a part about 10 ms.
 */
export const PART_CHARS = 256 * 1024;

/** The key of the outputs a file brought, kept as read until the cell runs. */
const FILE_OUTPUTS = -1;

/** Every output record of a notebook, or of one of its cells. */
const outputRange = (notebookId: string, cellId?: string) =>
  cellId === undefined ? IDBKeyRange.bound([notebookId], [notebookId, []]) : IDBKeyRange.bound([notebookId, cellId], [notebookId, cellId, Infinity]);

const summary = (record: StoredNotebook): NotebookSummary => ({
  id: record.id,
  title: record.title,
  updatedAt: record.updatedAt,
  cells: record.cells.length,
});

/** What the notebook's record keeps of a cell: everything but its outputs. */
function storedCell({ outputs: _outputs, fileOutputs: _fileOutputs, ...cell }: NotebookCell): StoredNotebook["cells"][number] {
  return cell;
}

/** What the notebooks store keeps of a notebook (its outputs are kept apart). */
export function storedNotebook(notebook: Notebook): StoredNotebook {
  return { ...notebook, cells: notebook.cells.map(storedCell) };
}

/**
 * Every notebook, newest first; with none, `first()` is saved and is the list. (The Playground's
 * code an older version kept became a notebook when the database was upgraded: see db.ts.)
 */
export async function listNotebooks(first: () => Notebook): Promise<NotebookSummary[]> {
  const db = await openAppDb();
  const read = await db.getAllFromIndex("notebooks", "updatedAt");
  if (read.length) return read.reverse().map(summary);
  // Only an empty list is read again and started in one write: two callers at once find the same first notebook.
  const tx = db.transaction("notebooks", "readwrite");
  const list = (await tx.store.index("updatedAt").getAll()).reverse();
  if (!list.length) {
    const created = storedNotebook(first());
    await tx.store.put(created);
    list.push(created);
  }
  await tx.done;
  return list.map(summary);
}

/** A notebook with its outputs, capped to the output limits as they are read; undefined when there is none. */
export async function loadNotebook(id: string): Promise<Notebook | undefined> {
  const db = await openAppDb();
  const tx = db.transaction(["notebooks", "cellOutputs"]);
  const record = await tx.objectStore("notebooks").get(id);
  if (!record) return undefined;
  const outputs = tx.objectStore("cellOutputs");
  const [keys, values] = await Promise.all([outputs.getAllKeys(outputRange(id)), outputs.getAll(outputRange(id))]);
  const parts = new Map<string, OutputItem[]>();
  const fromFile = new Map<string, unknown[]>();
  keys.forEach(([, cellId, part], index) => {
    const value = values[index];
    if (!Array.isArray(value)) return;
    if (part === FILE_OUTPUTS) fromFile.set(cellId, value);
    else parts.set(cellId, [...(parts.get(cellId) ?? []), ...(value as OutputItem[])]);
  });
  const cells = record.cells.map((cell): NotebookCell => {
    const file = fromFile.get(cell.id);
    return { ...cell, outputs: capStoredOutputs(parts.get(cell.id) ?? []), ...(file && { fileOutputs: file }) };
  });
  return { ...record, cells };
}

/**
 * Saves a notebook's title, metadata and cells (not their outputs, see {@link saveCellOutputs});
 * the outputs of cells it no longer has are deleted with it.
 */
export async function saveNotebook(notebook: Notebook): Promise<void> {
  const db = await openAppDb();
  const tx = db.transaction(["notebooks", "cellOutputs"], "readwrite");
  const outputs = tx.objectStore("cellOutputs");
  const cellIds = new Set(notebook.cells.map((cell) => cell.id));
  const gone = (await outputs.getAllKeys(outputRange(notebook.id))).filter(([, cellId]) => !cellIds.has(cellId));
  await Promise.all([...gone.map((key) => outputs.delete(key)), tx.objectStore("notebooks").put(storedNotebook(notebook))]);
  await tx.done;
}

/** Saves what a cell's last run showed, in place of what it showed before (and of any outputs its file brought). */
export async function saveCellOutputs(notebookId: string, cellId: string, items: readonly OutputItem[]): Promise<void> {
  const db = await openAppDb();
  const tx = db.transaction("cellOutputs", "readwrite");
  await tx.store.delete(outputRange(notebookId, cellId));
  // One part per task: each put waits for the one before.
  for (const [index, part] of outputParts(items, PART_CHARS).entries()) await tx.store.put(part, [notebookId, cellId, index]);
  await tx.done;
}

/** A whole new notebook, its outputs included (a file opened, a share link, a conversation carried on by hand). */
export async function addNotebook(notebook: Notebook): Promise<void> {
  const db = await openAppDb();
  const tx = db.transaction(["notebooks", "cellOutputs"], "readwrite");
  const outputs = tx.objectStore("cellOutputs");
  for (const cell of notebook.cells) {
    if (cell.fileOutputs) await outputs.put(cell.fileOutputs, [notebook.id, cell.id, FILE_OUTPUTS]);
    for (const [index, part] of outputParts(cell.outputs, PART_CHARS).entries()) await outputs.put(part, [notebook.id, cell.id, index]);
  }
  await tx.objectStore("notebooks").put(storedNotebook(notebook));
  await tx.done;
}

/** A notebook with its outputs, interpreter state, files and sandbox record, gone for good. */
export async function deleteNotebook(id: string): Promise<void> {
  const scope = notebookScope(id);
  const db = await openAppDb();
  const tx = db.transaction(["notebooks", "cellOutputs", "interpreterState", "sandboxes", "files"], "readwrite");
  const files = await tx.objectStore("files").index("scope").getAllKeys(scope);
  await Promise.all([
    tx.objectStore("notebooks").delete(id),
    tx.objectStore("cellOutputs").delete(outputRange(id)),
    tx.objectStore("interpreterState").delete(scope),
    tx.objectStore("interpreterState").delete(interpreterStateRange(scope)),
    tx.objectStore("sandboxes").delete(scope),
    ...files.map((key) => tx.objectStore("files").delete(key)),
  ]);
  await tx.done;
}

/** A notebook's saved interpreter state (kept as a conversation's is). */
export const loadNotebookState = (id: string): Promise<SessionSnapshot | undefined> => loadInterpreterState(notebookScope(id));

export const saveNotebookState = (id: string, snapshot: SessionSnapshot): Promise<void> => saveInterpreterState(notebookScope(id), snapshot);

/** `items` in order, cut into runs of at most about `maxChars` characters (an item larger than that is a part alone). */
export function outputParts(items: readonly OutputItem[], maxChars: number): OutputItem[][] {
  const parts: OutputItem[][] = [];
  let part: OutputItem[] = [];
  let chars = 0;
  for (const item of items) {
    const size = charsOf(item);
    if (part.length > 0 && chars + size > maxChars) {
      parts.push(part);
      part = [];
      chars = 0;
    }
    part.push(item);
    chars += size;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}

/** The characters of an item's text and data (an estimate of what storing it copies). */
function charsOf(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (typeof value !== "object" || value === null) return 8;
  let chars = 0;
  for (const field of Object.values(value)) chars += charsOf(field);
  return chars;
}
