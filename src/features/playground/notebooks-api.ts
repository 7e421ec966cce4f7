/** Stand-in for src/storage/notebooks.ts until it lands: the same API, kept in localStorage. */
import type { OutputItem } from "../../model/output";
import type { SessionSnapshot } from "../../../workers/python-api";
import { newCell, type Notebook } from "../../notebook/model";
import { loadPlayground } from "../../storage/playground";

export const notebookScope = (id: string) => `notebook:${id}`;
export interface NotebookSummary {
  id: string;
  title: string;
  updatedAt: number;
  cells: number;
}
const KEY = "kiln-notebooks-temp";
const states = new Map<string, SessionSnapshot>();
function all(): Record<string, Notebook> {
  return JSON.parse(localStorage.getItem(KEY) ?? "{}") as Record<string, Notebook>;
}
function put(notebooks: Record<string, Notebook>) {
  localStorage.setItem(KEY, JSON.stringify(notebooks));
}
export async function listNotebooks(): Promise<NotebookSummary[]> {
  const notebooks = all();
  if (!Object.keys(notebooks).length) {
    const old = await loadPlayground();
    const cell = newCell("code", old?.code ?? 'name = "Kiln"\nprint(f"Hello from {name}!")');
    cell.outputs = old?.outputs ?? [];
    const now = Date.now();
    notebooks.first = { id: crypto.randomUUID(), title: "Welcome", cells: [cell], metadata: {}, createdAt: now, updatedAt: now };
    notebooks[notebooks.first.id] = notebooks.first;
    delete notebooks.first;
    put(notebooks);
  }
  return Object.values(notebooks)
    .sort((a, b) => b.updatedAt - a.updatedAt)
    .map(({ id, title, updatedAt, cells }) => ({ id, title, updatedAt, cells: cells.length }));
}
export async function loadNotebook(id: string): Promise<Notebook | undefined> {
  return all()[id];
}
export async function saveNotebook(notebook: Notebook): Promise<void> {
  const notebooks = all();
  const old = notebooks[notebook.id];
  const outputs = new Map(old?.cells.map((cell) => [cell.id, cell.outputs]));
  notebooks[notebook.id] = { ...notebook, cells: notebook.cells.map((cell) => ({ ...cell, outputs: outputs.get(cell.id) ?? [] })) };
  put(notebooks);
}
export async function saveCellOutputs(notebookId: string, cellId: string, outputs: OutputItem[]): Promise<void> {
  const notebooks = all();
  const cell = notebooks[notebookId]?.cells.find((c) => c.id === cellId);
  if (cell) cell.outputs = outputs;
  put(notebooks);
}
export async function addNotebook(notebook: Notebook): Promise<void> {
  put({ ...all(), [notebook.id]: notebook });
}
export async function deleteNotebook(id: string): Promise<void> {
  const notebooks = all();
  delete notebooks[id];
  put(notebooks);
}
export async function loadNotebookState(id: string): Promise<SessionSnapshot | undefined> {
  return states.get(id);
}
export async function saveNotebookState(id: string, snapshot: SessionSnapshot): Promise<void> {
  states.set(id, snapshot);
}
