import { openAppDb, type StoredFile } from "./db";

export type { StoredFile };

type Record = Omit<StoredFile, "data"> & { data: Blob | ArrayBuffer };
const asFile = (record: Record): StoredFile =>
  record.data instanceof Blob ? (record as StoredFile) : { ...record, data: new Blob([record.data]) };

/** A scope's files, by path. */
export async function listStoredFiles(scope: string): Promise<StoredFile[]> {
  const db = await openAppDb();
  const files = await db.getAllFromIndex("files", "scope", scope);
  return files.map(asFile).sort((a, b) => a.path.localeCompare(b.path));
}

export async function getStoredFile(scope: string, path: string): Promise<StoredFile | undefined> {
  const db = await openAppDb();
  const record = await db.get("files", [scope, path]);
  return record && asFile(record);
}

/** Save one file. A full disk quota rejects with {@link QuotaError}; nothing saved before is touched. */
export async function storeFile(file: StoredFile): Promise<void> {
  const db = await openAppDb();
  try {
    try {
      await db.put("files", file);
    } catch (error) {
      if (isQuotaError(error)) throw error;
      // Some browsers (WebKit in some sessions) cannot keep a Blob in IndexedDB: keep its bytes.
      await db.put("files", { ...file, data: await file.data.arrayBuffer() });
    }
  } catch (error) {
    if (isQuotaError(error)) throw new QuotaError(file.path, file.size);
    throw error;
  }
}

export async function deleteStoredFile(scope: string, path: string): Promise<void> {
  const db = await openAppDb();
  await db.delete("files", [scope, path]);
}

/** The browser's storage for this site is full. */
export class QuotaError extends Error {
  constructor(
    readonly path: string,
    readonly size: number,
  ) {
    super(
      `Not enough browser storage to keep ${path}. Your other files are safe; ` +
        "free some space (delete files or conversations you no longer need) and try again.",
    );
    this.name = "QuotaError";
  }
}

function isQuotaError(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name;
  return name === "QuotaExceededError" || (name === "AbortError" && /quota/i.test(String((error as Error).message)));
}
