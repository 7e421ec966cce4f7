/**
 * A notebook as Kiln holds it: the Playground's cells, whatever file they came from (see
 * docs/notebooks.md). Plain data (and Blobs in outputs): it is stored as is.
 */
import type { OutputItem } from "../model/output";

export type CellKind = "code" | "markdown" | "raw";

/** How a code cell's last run went, as the cell shows it. */
export type CellRunState = "idle" | "queued" | "running" | "done" | "failed";

export interface NotebookCell {
  /** The nbformat 4.5 cell id: 1–64 characters of `[a-zA-Z0-9-_]`, unique in its notebook. */
  id: string;
  kind: CellKind;
  source: string;
  /** What the cell's last run showed (code cells). */
  outputs: OutputItem[];
  /** `[N]`: the interpreter's run counter when the cell last ran; null when it has not. */
  executionCount: number | null;
  /** The cell's metadata from the file it came from, kept on the way through. */
  metadata: Record<string, unknown>;
  /**
   * The outputs exactly as the file held them, kept while the cell has not run in Kiln, and
   * written back unchanged on download (they may hold types Kiln does not show). A run drops them.
   */
  fileOutputs?: unknown[];
  /** Attachments of a Markdown cell, kept on the way through. */
  attachments?: Record<string, unknown>;
}

export interface Notebook {
  id: string;
  title: string;
  cells: NotebookCell[];
  /** The notebook's metadata from its file (kernelspec, language_info, …), kept on the way through. */
  metadata: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

/** A new cell id: 8 base-36 characters from the browser's random numbers. */
export function newCellId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (byte) => (byte % 36).toString(36)).join("");
}

export function newCell(kind: CellKind, source = ""): NotebookCell {
  return { id: newCellId(), kind, source, outputs: [], executionCount: null, metadata: {} };
}

/** A new notebook of these cells (by default one empty code cell), made now. */
export function newNotebook(title: string, cells = [newCell("code")], metadata: Record<string, unknown> = {}): Notebook {
  const now = Date.now();
  return { id: crypto.randomUUID(), title, cells, metadata, createdAt: now, updatedAt: now };
}
