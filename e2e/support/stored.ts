import type { Page } from "@playwright/test";

/** Every record of one of the app's IndexedDB stores, read straight from IndexedDB (not through the app). */
export function storedRecords<T>(page: Page, store: string): Promise<T[]> {
  return page.evaluate(
    (name) =>
      new Promise<T[]>((resolve, reject) => {
        const open = indexedDB.open("kiln");
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const all = open.result.transaction(name).objectStore(name).getAll();
          all.onsuccess = () => resolve(all.result as T[]);
        };
      }),
    store,
  );
}
