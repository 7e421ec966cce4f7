/**
 * Deleting everything Kiln keeps in this browser: every IndexedDB database, every Cache Storage
 * entry, localStorage and sessionStorage, and the service worker, in this tab and in every other
 * tab of Kiln. The other tabs are told over a BroadcastChannel: they stop their Python, close
 * their databases (a delete that another connection blocks waits for it) and keep nothing more.
 */
import { DB_NAME } from "../../storage/db";
import { SNAPSHOT_DB } from "../../runtime/snapshot-store";
import { currentErasure, setErasure } from "../../storage/erased";

/** Kiln's databases, also where the browser cannot list them (`indexedDB.databases()`). */
export const KILN_DATABASES = [DB_NAME, SNAPSHOT_DB];

type Note = { type: "deleting" } | { type: "deleted" };

const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("kiln-delete-everything") : undefined;

/** Another tab deletes everything: this one lets go at once, then hears when it is done. */
channel?.addEventListener("message", (event: MessageEvent<Note>) => {
  if (event.data?.type === "deleting") {
    clearTabStorage();
    setErasure({ by: "another tab", done: false });
  } else if (event.data?.type === "deleted") {
    setErasure({ by: "another tab", done: true });
  }
});

/** This tab's sessionStorage and the origin's localStorage (either may be blocked). */
function clearTabStorage(): void {
  for (const storage of [() => sessionStorage, () => localStorage]) {
    try {
      storage().clear();
    } catch {
      // No storage of this kind here: nothing of it to delete.
    }
  }
}

/** Deletes one database, waiting while another connection still holds it (`onBlocked` says so). */
function deleteDatabase(name: string, onBlocked: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error ?? new Error(`The database ${name} could not be deleted.`));
    request.onblocked = onBlocked;
  });
}

/** Every database of this origin: those the browser lists, and Kiln's own where it lists none. */
async function databaseNames(): Promise<string[]> {
  const listed = typeof indexedDB.databases === "function" ? await indexedDB.databases().catch(() => []) : [];
  return [...new Set([...KILN_DATABASES, ...listed.flatMap((database) => (database.name ? [database.name] : []))])];
}

/**
 * Deletes everything, here and in every other tab of Kiln, and resolves once it is gone. From
 * the start this tab keeps nothing more (see storage/erased.ts) until it is reloaded.
 */
export async function deleteEverything(): Promise<void> {
  if (currentErasure()?.by === "this tab") return;
  setErasure({ by: "this tab", done: false, waiting: false });
  channel?.postMessage({ type: "deleting" } satisfies Note);
  clearTabStorage();
  // The service worker first: it would otherwise fill its caches again.
  if ("serviceWorker" in navigator) {
    const registrations = await navigator.serviceWorker.getRegistrations();
    await Promise.all(registrations.map((registration) => registration.unregister()));
  }
  if (typeof caches !== "undefined") {
    for (const key of await caches.keys()) await caches.delete(key);
  }
  for (const name of await databaseNames()) {
    await deleteDatabase(name, () => setErasure({ by: "this tab", done: false, waiting: true }));
  }
  // What a page wrote while the delete went on.
  clearTabStorage();
  setErasure({ by: "this tab", done: true, waiting: false });
  channel?.postMessage({ type: "deleted" } satisfies Note);
}
