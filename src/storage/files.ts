import { openAppDb, type StoredFile } from "./db";

export type { StoredFile };

/** A file as kept: its content a Blob, or bytes (small files Python writes, and where a browser cannot keep a Blob). */
export type StoredRecord = Omit<StoredFile, "data"> & { data: Blob | ArrayBuffer };
const asFile = (record: StoredRecord): StoredFile =>
  record.data instanceof Blob ? (record as StoredFile) : { ...record, data: new Blob([record.data]) };

/** A scope's files as kept (bytes or Blobs), in no particular order: one read. */
export async function readStoredFiles(scope: string): Promise<StoredRecord[]> {
  const db = await openAppDb();
  return db.getAllFromIndex("files", "scope", scope);
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
    try {
      await Promise.all([...records.map((record) => tx.store.put(record)), tx.done]);
    } catch (error) {
      // None of them, then: the puts already made go back with the transaction.
      tx.done.catch(() => undefined);
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
  await Promise.all([...paths.map((path) => tx.store.delete([scope, path])), tx.done]);
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
