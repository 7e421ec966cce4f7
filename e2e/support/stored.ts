import { expect, type Page } from "@playwright/test";

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

/** The interpreter state records in the page's database: the snapshot's value keys, and every value record's key. */
export async function storedState(page: Page): Promise<{ valueKeys: Record<string, string>; records: string[] }> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const request = indexedDB.open("kiln");
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    const store = db.transaction("interpreterState").objectStore("interpreterState");
    const [keys, values] = await Promise.all(
      [store.getAllKeys(), store.getAll()].map(
        (request) => new Promise<unknown[]>((resolve, reject) => ((request.onsuccess = () => resolve(request.result)), (request.onerror = () => reject(request.error)))),
      ),
    );
    db.close();
    const snapshot = values.find((value) => value && typeof value === "object" && "valueKeys" in value) as { valueKeys: Record<string, string> } | undefined;
    return { valueKeys: snapshot?.valueKeys ?? {}, records: keys.filter((key): key is string => typeof key === "string" && key.includes("\u0000")) };
  });
}

/**
 * Keeps a read-write transaction on `stores` going from another page of the app's origin, so
 * that every write of the app to them waits behind it (storage that is slow to answer). `keys()`
 * reads the first store's keys as they are meanwhile; `release()` lets the app's writes go on.
 */
export async function holdStores(page: Page, stores: string[]) {
  const other = await page.context().newPage();
  await other.goto("/icon.svg");
  await other.evaluate(
    (names) =>
      new Promise<void>((started) => {
        const held = window as unknown as { keys?: IDBValidKey[]; release?: boolean };
        const open = indexedDB.open("kiln");
        open.onsuccess = () => {
          const store = open.result.transaction(names, "readwrite").objectStore(names[0]);
          const spin = () => {
            const read = store.getAllKeys();
            read.onsuccess = () => {
              held.keys = read.result;
              started();
              if (!held.release) spin();
            };
          };
          spin();
        };
      }),
    stores,
  );
  return {
    keys: () => other.evaluate(() => (window as unknown as { keys: IDBValidKey[] }).keys),
    release: async () => {
      await other.evaluate(() => ((window as unknown as { release: boolean }).release = true));
      await other.close();
    },
  };
}

/**
 * From now on the app's writes (`put`) to the stores named in `refused` fail as on a full disk
 * (`QuotaExceededError`), until `setDiskFull(page, false)`: every write to a store given `true`,
 * and to a store given a role, only its records of that role ("assistant": the model's answers).
 */
export async function fillDisk(page: Page, refused: Record<string, true | string>): Promise<void> {
  await page.evaluate((stores) => {
    const win = window as unknown as { kilnDiskFull: boolean };
    win.kilnDiskFull = true;
    const put = IDBObjectStore.prototype.put;
    IDBObjectStore.prototype.put = function (...args: Parameters<typeof put>) {
      const rule = stores[this.name];
      const hit = rule === true || (rule !== undefined && (args[0] as { role?: string }).role === rule);
      if (win.kilnDiskFull && hit) throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
      return put.apply(this, args);
    };
  }, refused);
}

export async function setDiskFull(page: Page, full: boolean): Promise<void> {
  await page.evaluate((value) => ((window as unknown as { kilnDiskFull: boolean }).kilnDiskFull = value), full);
}

/** A reload asked for now is held by the browser's "Leave site?" question, which the person answers Stay. */
export async function leavingAsksFirst(page: Page): Promise<void> {
  const asked = page.waitForEvent("dialog", { timeout: 10_000 });
  void page.evaluate(() => location.reload()).catch(() => undefined);
  const dialog = await asked;
  expect(dialog.type()).toBe("beforeunload");
  await dialog.dismiss();
}

/**
 * The app reads saved output in a worker of its own (src/storage/read-off-thread.ts), which a
 * test's init script does not reach: with that worker's code refused, the page reads storage
 * itself, where the test's script can hold or fail the reads.
 */
export async function readStorageOnPage(page: Page): Promise<void> {
  await page.route(/\/stored-reader\.worker-[^/]*\.js$/, (route) => route.abort());
}

/**
 * Makes the page's database as Kiln's schema `version` (3 or 4, before notebooks) made it, before
 * this version of the app ever opens it; resolves open, for the test to fill and close.
 * Given to the page as `window.kilnOldDatabase` by {@link defineOldDatabase}.
 */
function openOldDatabase(version: 3 | 4): Promise<IDBDatabase> {
  return new Promise<IDBDatabase>((resolve, reject) => {
    const request = indexedDB.open("kiln", version);
    request.onupgradeneeded = () => {
      const d = request.result;
      d.createObjectStore("settings");
      d.createObjectStore("playground");
      d.createObjectStore("conversations", { keyPath: "id" }).createIndex("updatedAt", "updatedAt");
      d.createObjectStore("messages", { keyPath: "id" }).createIndex("conversationId", "conversationId");
      d.createObjectStore("interpreterState");
      d.createObjectStore("sandboxes");
      d.createObjectStore("files", { keyPath: ["scope", "path"] }).createIndex("scope", "scope");
      d.createObjectStore("drafts");
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** Lets the page's own scripts call `window.kilnOldDatabase(version)` (see openOldDatabase). */
export async function defineOldDatabase(page: Page): Promise<void> {
  await page.evaluate(`window.kilnOldDatabase = ${openOldDatabase.toString()}`);
}
