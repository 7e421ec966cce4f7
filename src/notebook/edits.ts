/**
 * The edits a person makes to a notebook, as pure functions: each returns a new notebook, or
 * the same one when there is nothing to change (so that nothing is saved for it).
 */
import type { CellKind, Notebook, NotebookCell } from "./model";

function mapCell(notebook: Notebook, cellId: string, update: (cell: NotebookCell) => NotebookCell): Notebook {
  const index = notebook.cells.findIndex((cell) => cell.id === cellId);
  const updated = index < 0 ? undefined : update(notebook.cells[index]);
  if (!updated || updated === notebook.cells[index]) return notebook;
  const cells = [...notebook.cells];
  cells[index] = updated;
  return { ...notebook, cells };
}

/** Cell `cellId`'s code or text is now `source`. */
export const editSource = (notebook: Notebook, cellId: string, source: string): Notebook =>
  mapCell(notebook, cellId, (cell) => (cell.source === source ? cell : { ...cell, source }));

/** Cell `cellId` ran as `[count]`: the outputs it came with from its file are dropped. */
export const setCount = (notebook: Notebook, cellId: string, count: number): Notebook =>
  mapCell(notebook, cellId, (cell) => ({ ...cell, executionCount: count, fileOutputs: undefined }));

/** `cell` after cell `afterId`, or at the end when there is no such cell. */
export function insertCell(notebook: Notebook, cell: NotebookCell, afterId: string | null): Notebook {
  const index = notebook.cells.findIndex((c) => c.id === afterId);
  const cells = [...notebook.cells];
  cells.splice(index < 0 ? cells.length : index + 1, 0, cell);
  return { ...notebook, cells };
}

export function removeCell(notebook: Notebook, cellId: string): Notebook {
  const cells = notebook.cells.filter((cell) => cell.id !== cellId);
  return cells.length === notebook.cells.length ? notebook : { ...notebook, cells };
}

/** Cell `cellId` moved `by` places (-1 up, 1 down); not past either end. */
export function moveCell(notebook: Notebook, cellId: string, by: number): Notebook {
  const index = notebook.cells.findIndex((cell) => cell.id === cellId);
  const to = index + by;
  if (index < 0 || to < 0 || to >= notebook.cells.length || to === index) return notebook;
  const cells = [...notebook.cells];
  [cells[index], cells[to]] = [cells[to], cells[index]];
  return { ...notebook, cells };
}

/** Cell `cellId` becomes a cell of `kind`, keeping its source; what it showed and its count go. */
export const changeKind = (notebook: Notebook, cellId: string, kind: CellKind): Notebook =>
  mapCell(notebook, cellId, (cell) =>
    cell.kind === kind ? cell : { ...cell, kind, executionCount: null, outputs: [], fileOutputs: undefined },
  );

/** After a restart no cell has a count. */
export function clearCounts(notebook: Notebook): Notebook {
  if (notebook.cells.every((cell) => cell.executionCount === null)) return notebook;
  return { ...notebook, cells: notebook.cells.map((cell) => (cell.executionCount === null ? cell : { ...cell, executionCount: null })) };
}
