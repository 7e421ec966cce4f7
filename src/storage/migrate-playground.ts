/**
 * The Playground's code, output and files as an older version kept them become the first
 * notebook (see docs/notebooks.md), in one transaction: a reload finds all of it moved or none.
 * It runs in the stored-reader worker: what an older version stored may be tens of megabytes of
 * output in one record, which is read and cut to the output limits there, off the page's thread.
 */
import type { OutputItem } from "../model/output";
import { newCell, newNotebook } from "../notebook/model";
import { openAppDb, type StoredPlayground } from "./db";
import { capStoredOutputs } from "./output-caps";
import { notebookScope, outputParts, PART_CHARS, storedNotebook } from "./notebooks";

/** The Playground's scope before notebooks: its files and sandbox record were kept under it. */
const OLD_SCOPE = "playground";

/** Whether an older version's Playground is stored, waiting to become a notebook. */
export async function playgroundToMigrate(): Promise<boolean> {
  const db = await openAppDb();
  return (await db.count("playground", "current")) > 0;
}

/** Moves the old Playground into a notebook; resolves with its id, or "" when there was nothing to move. */
export async function migratePlayground(): Promise<string> {
  const db = await openAppDb();
  const tx = db.transaction(["playground", "notebooks", "cellOutputs", "files", "sandboxes"], "readwrite");
  const old = tx.objectStore("playground");
  const record = (await old.get("current")) as StoredPlayground | undefined;
  if (!record || typeof record.code !== "string") {
    await tx.done;
    return "";
  }
  let outputs: OutputItem[] = Array.isArray(record.outputs) ? record.outputs : [];
  for (let index = 0; index < (record.parts ?? 0); index += 1) {
    const part = await old.get(`current/${index}`);
    if (Array.isArray(part)) outputs = outputs.concat(part);
  }
  const cell = newCell("code", record.code);
  const notebook = newNotebook("Playground", [cell]);
  notebook.updatedAt = notebook.createdAt = typeof record.updatedAt === "number" ? record.updatedAt : Date.now();
  await tx.objectStore("notebooks").put(storedNotebook(notebook));
  for (const [index, part] of outputParts(capStoredOutputs(outputs), PART_CHARS).entries()) {
    await tx.objectStore("cellOutputs").put(part, [notebook.id, cell.id, index]);
  }
  const scope = notebookScope(notebook.id);
  const files = tx.objectStore("files");
  for (let cursor = await files.index("scope").openCursor(OLD_SCOPE); cursor; cursor = await cursor.continue()) {
    await files.put({ ...cursor.value, scope });
    await cursor.delete();
  }
  const sandbox = await tx.objectStore("sandboxes").get(OLD_SCOPE);
  if (sandbox) {
    await tx.objectStore("sandboxes").put(sandbox, scope);
    await tx.objectStore("sandboxes").delete(OLD_SCOPE);
  }
  await old.clear();
  await tx.done;
  return notebook.id;
}
