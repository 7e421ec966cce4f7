/**
 * Where a page keeps Python's start-up snapshot (see boot-snapshot.ts): a database of its own
 * in IndexedDB, one record per build. IndexedDB keeps a Blob as a file and gives it back by
 * reference, so the page hands the worker the stored file itself: Firefox reads a 30 MB body
 * out of Cache Storage into a new Blob first (about 200 ms), but takes a few ms here.
 */
import { openDB, type DBSchema } from "idb";
import { ErasedError, storageErased } from "../storage/erased";

/** The database and its one store (tests open them by these names). */
export const SNAPSHOT_DB = "kiln-python-snapshots";
export const SNAPSHOT_STORE = "snapshots";

/** Where earlier versions kept the snapshot (Cache Storage), deleted when a snapshot is stored. */
const OLD_SNAPSHOT_CACHE = "kiln-python-snapshots";

/** A snapshot larger than this is neither kept nor taken from another page (a booted interpreter is about 30 MB). */
export const MAX_SNAPSHOT_BYTES = 256 << 20;

export interface SnapshotRecord {
  /** Its bytes where the browser cannot keep a Blob in IndexedDB (WebKit in some sessions). */
  data: Blob | ArrayBuffer;
  /** xxHash64 of the bytes, hex. */
  checksum: string;
  /** Restores of it that failed. */
  failures: number;
}

interface Schema extends DBSchema {
  snapshots: { key: string; value: SnapshotRecord };
}

/** Refused once everything Kiln keeps was deleted, so that no snapshot is written again before a reload. */
const open = () =>
  storageErased()
    ? Promise.reject(new ErasedError())
    : openDB<Schema>(SNAPSHOT_DB, 1, {
    upgrade(db) {
      db.createObjectStore(SNAPSHOT_STORE);
    },
  });

/** Opened for one read or one write, then closed, so that no page holds the database open. */
async function withStore<T>(work: (db: Awaited<ReturnType<typeof open>>) => Promise<T>): Promise<T> {
  const db = await open();
  try {
    return await work(db);
  } finally {
    db.close();
  }
}

/** The snapshot stored under `key`, its data as a Blob; rejects where this page has no storage. */
export async function readSnapshot(key: string): Promise<(SnapshotRecord & { data: Blob }) | undefined> {
  const record = await withStore((db) => db.get(SNAPSHOT_STORE, key));
  if (!record) return undefined;
  return { ...record, data: record.data instanceof Blob ? record.data : new Blob([record.data]) };
}

/** Keeps `record` under `key` and deletes every other build's snapshot. */
export async function writeSnapshot(key: string, record: SnapshotRecord & { data: Blob }): Promise<void> {
  const put = (data: Blob | ArrayBuffer) =>
    withStore(async (db) => {
      const tx = db.transaction(SNAPSHOT_STORE, "readwrite");
      const others = (await tx.store.getAllKeys()).filter((other) => other !== key);
      await Promise.all([...others.map((other) => tx.store.delete(other)), tx.store.put({ ...record, data }, key), tx.done]);
    });
  try {
    await put(record.data);
  } catch (error) {
    // A full quota fails again as bytes; a browser that cannot keep a Blob here can keep them.
    if (error instanceof DOMException && error.name === "QuotaExceededError") throw error;
    await put(await record.data.arrayBuffer());
  }
  if (typeof caches !== "undefined") await caches.delete(OLD_SNAPSHOT_CACHE).catch(() => false);
}
