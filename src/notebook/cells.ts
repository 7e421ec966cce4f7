import { newCellId } from "./model";

/** A file or link that cannot be opened as a notebook; the message says, in words, what is wrong and where. */
export class NotebookFileError extends Error {
  override name = "NotebookFileError";
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** What nbformat 4.5 allows as a cell id. */
const CELL_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/** `id` when it is a valid cell id not yet in `taken`, else a new one; either way added to `taken`. */
export function takeCellId(id: unknown, taken: Set<string>): string {
  let kept = typeof id === "string" && CELL_ID.test(id) && !taken.has(id) ? id : newCellId();
  while (taken.has(kept)) kept = newCellId();
  taken.add(kept);
  return kept;
}

