import type { OutputItem } from "../model/output";
import { capStoredOutputs } from "./output-caps";
import { openAppDb, type PlaygroundRecord, type StoredPlayground } from "./db";

const KEY = "current";

/**
 * The Playground's output is saved in parts of about this many characters, each under a key
 * of its own (`current/0`, `current/1`, …) beside the record of its code. IndexedDB copies a
 * value on the page's main thread when it is put and when it is read: one put of a flood's
 * 7 MB of output held the page up for 120–240 ms on a 2-core machine, a part about 10 ms.
 */
export const PART_CHARS = 256 * 1024;

const partKey = (index: number) => `${KEY}/${index}`;
/** Every part's key, and no other ("current" itself sorts before them). */
const partKeys = () => IDBKeyRange.bound(`${KEY}/`, `${KEY}/\uffff`);

export async function loadPlayground(): Promise<PlaygroundRecord | undefined> {
  const db = await openAppDb();
  const tx = db.transaction("playground");
  const record = (await tx.store.get(KEY)) as StoredPlayground | undefined;
  if (!record) return undefined;
  // Older versions kept the output inside the record. Either way it is capped as it is read:
  // what an older version stored may hold displays of any size.
  if (record.outputs) return { code: record.code, outputs: capStoredOutputs(record.outputs), updatedAt: record.updatedAt };
  // Each part is read (and copied) in a task of its own.
  const parts = await Promise.all(Array.from({ length: record.parts ?? 0 }, (_, index) => tx.store.get(partKey(index))));
  const outputs = parts.flatMap((part) => (Array.isArray(part) ? part : []));
  return { code: record.code, outputs: capStoredOutputs(outputs), updatedAt: record.updatedAt };
}

/**
 * Saves the code and its output in one transaction (a reload sees the old save or the new
 * one, never a mix), one part per task: each put waits for the one before.
 */
export async function savePlayground({ code, outputs, updatedAt }: PlaygroundRecord): Promise<void> {
  const db = await openAppDb();
  const tx = db.transaction("playground", "readwrite");
  const parts = outputParts(outputs, PART_CHARS);
  await tx.store.delete(partKeys());
  for (const [index, part] of parts.entries()) await tx.store.put(part, partKey(index));
  await tx.store.put({ code, updatedAt, parts: parts.length }, KEY);
  await tx.done;
}

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
