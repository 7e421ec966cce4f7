import { openAppDb, type StoredFile } from "./db";

export type { StoredFile };

/** A file as kept: its content a Blob, or bytes (small files Python writes, and where a browser cannot keep a Blob). */
export type StoredRecord = Omit<StoredFile, "data"> & { data: Blob | ArrayBuffer };
const asFile = (record: StoredRecord): StoredFile =>
  record.data instanceof Blob ? (record as StoredFile) : { ...record, data: new Blob([record.data]) };

/**
 * Records read or written per step of a transaction: each step is a task of its own on the
 * page's thread (10,000 records at once held it for about half a second).
 */
const STEP = 1000;

/** A scope's files as kept (bytes or Blobs), by path: one transaction, read a step at a time. */
export async function readStoredFiles(scope: string): Promise<StoredRecord[]> {
  const db = await openAppDb();
  const store = db.transaction("files").store;
  const records: StoredRecord[] = [];
  // Keys are [scope, path]: every path (a string) sorts below an array.
  let range = IDBKeyRange.bound([scope, ""], [scope, []]);
  for (;;) {
    const step = await store.getAll(range, STEP);
    records.push(...step);
    if (step.length < STEP) return records;
    range = IDBKeyRange.bound([scope, step[step.length - 1].path], [scope, []], true);
  }
}

/** A scope's files, by path. */
export async function listStoredFiles(scope: string): Promise<StoredFile[]> {
  return (await readStoredFiles(scope)).map(asFile).sort((a, b) => a.path.localeCompare(b.path));
}

export async function getStoredFile(scope: string, path: string): Promise<StoredFile | undefined> {
  const db = await openAppDb();
  const record = await db.get("files", [scope, path]);
  return record && asFile(record);
}

/** Save one file. A full disk quota rejects with {@link QuotaError}; nothing saved before is touched. */
export function storeFile(file: StoredFile): Promise<void> {
  return storeFiles([file]);
}

/**
 * Save files in one transaction: all of them or, when it fails, none. A full disk quota rejects
 * with {@link QuotaError}; nothing saved before is touched.
 */
export async function storeFiles(files: readonly StoredRecord[]): Promise<void> {
  if (!files.length) return;
  const db = await openAppDb();
  const putAll = async (records: readonly StoredRecord[]) => {
    const tx = db.transaction("files", "readwrite");
    // Its failure is the failed put's, awaited below.
    tx.done.catch(() => undefined);
    try {
      // Each step is written from the success of the step before, which keeps the transaction open.
      for (let i = 0; i < records.length; i += STEP) await Promise.all(records.slice(i, i + STEP).map((record) => tx.store.put(record)));
      await tx.done;
    } catch (error) {
      // None of them, then: the puts already made go back with the transaction.
      try {
        tx.abort();
      } catch {
        // Already ended.
      }
      throw error;
    }
  };
  try {
    try {
      await putAll(files);
    } catch (error) {
      if (isQuotaError(error) || files.every((file) => !(file.data instanceof Blob))) throw error;
      // Some browsers (WebKit in some sessions) cannot keep a Blob in IndexedDB: keep its bytes.
      await putAll(await Promise.all(files.map(async (file) => ({ ...file, data: file.data instanceof Blob ? await file.data.arrayBuffer() : file.data }))));
    }
  } catch (error) {
    if (isQuotaError(error)) throw new QuotaError(files.map((file) => file.path));
    throw error;
  }
}

export function deleteStoredFile(scope: string, path: string): Promise<void> {
  return deleteStoredFiles(scope, [path]);
}

/** Delete files of a scope in one transaction. */
export async function deleteStoredFiles(scope: string, paths: readonly string[]): Promise<void> {
  if (!paths.length) return;
  const db = await openAppDb();
  const tx = db.transaction("files", "readwrite");
  tx.done.catch(() => undefined);
  for (let i = 0; i < paths.length; i += STEP) await Promise.all(paths.slice(i, i + STEP).map((path) => tx.store.delete([scope, path])));
  await tx.done;
}

/** The browser's storage for this site is full. */
export class QuotaError extends Error {
  constructor(readonly paths: readonly string[]) {
    super(
      `Not enough browser storage to keep ${paths.length === 1 ? paths[0] : `${paths.length} files (${paths.slice(0, 3).join(", ")}${paths.length > 3 ? ", …" : ""})`}. ` +
        "Your other files are safe; free some space (delete files or conversations you no longer need) and try again.",
    );
    this.name = "QuotaError";
  }
}

function isQuotaError(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name;
  return name === "QuotaExceededError" || (name === "AbortError" && /quota/i.test(String((error as Error).message)));
}
