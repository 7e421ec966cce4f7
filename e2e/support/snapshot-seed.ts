import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, type Browser, type BrowserContext, type Frame, type Page } from "@playwright/test";
import { SNAPSHOT_DB, SNAPSHOT_STORE } from "../../src/runtime/snapshot-store";
import { openPlayground } from "./playground";

/** One stored snapshot, as the app keeps it in IndexedDB; its bytes are at `bytesUrl`. */
export interface StoredSnapshot {
  key: string;
  checksum: string;
  failures: number;
  bytesUrl: string;
}

/** A snapshot record as a page of the app reads it, its key beside it. */
export interface SnapshotEntry {
  key: string;
  data: Blob;
  checksum: string;
  failures: number;
}

/** The app's snapshot store, opened in the page as IndexedDB itself (see src/runtime/snapshot-store.ts). */
export interface SnapshotStore {
  entries(): Promise<SnapshotEntry[]>;
  put(entry: SnapshotEntry): Promise<void>;
  remove(key: string): Promise<void>;
}

/** Runs in the page: the store's three operations, each in a transaction of its own. */
function pageSnapshotStore(names: { db: string; store: string }): SnapshotStore {
  const done = <T>(request: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  const inStore = async <T>(mode: IDBTransactionMode, use: (store: IDBObjectStore) => Promise<T>): Promise<T> => {
    const opening = indexedDB.open(names.db, 1);
    opening.onupgradeneeded = () => opening.result.createObjectStore(names.store);
    const db = await done(opening);
    try {
      const tx = db.transaction(names.store, mode);
      const result = await use(tx.objectStore(names.store));
      await new Promise((resolve, reject) => {
        tx.oncomplete = resolve;
        tx.onerror = () => reject(tx.error);
      });
      return result;
    } finally {
      db.close();
    }
  };
  return {
    entries: () =>
      inStore("readonly", async (store) => {
        const [keys, values] = await Promise.all([done(store.getAllKeys()), done(store.getAll())]);
        return keys.map((key, i) => {
          const { data, checksum, failures } = values[i] as { data: Blob | ArrayBuffer; checksum: string; failures: number };
          return { key: String(key), data: data instanceof Blob ? data : new Blob([data]), checksum, failures };
        });
      }),
    put: ({ key, ...record }) => inStore("readwrite", async (store) => void (await done(store.put(record, key)))),
    remove: (key) => inStore("readwrite", async (store) => void (await done(store.delete(key)))),
  };
}

/**
 * Runs `use` in `target` (a page or frame of the app's origin) with the app's snapshot store;
 * `arg` must be JSON.
 */
export function inSnapshotStore<R, A = undefined>(target: Page | Frame, use: (store: SnapshotStore, arg: A) => Promise<R>, arg?: A): Promise<R> {
  const names = JSON.stringify({ db: SNAPSHOT_DB, store: SNAPSHOT_STORE });
  return target.evaluate(`(${use.toString()})((${pageSnapshotStore.toString()})(${names}), ${JSON.stringify(arg ?? null)})`) as Promise<R>;
}

/** A loopback server that keeps the bytes of one snapshot (see {@link snapshotServer}). */
export interface SnapshotServer {
  url: string;
  size(): number;
  close(): Promise<void>;
}

/**
 * One loopback server per test worker that holds the bytes of a snapshot: pages hand them
 * over and fetch them at loopback speed (Playwright's own channel carries bodies as base64:
 * seconds for 30 MB).
 */
export async function snapshotServer(): Promise<SnapshotServer> {
  let body = Buffer.alloc(0);
  const server = createServer((request, response) => {
    response.setHeader("access-control-allow-origin", "*");
    if (request.method === "OPTIONS") {
      const preflight = { "access-control-allow-methods": "GET, POST", "access-control-allow-headers": "content-type", "access-control-allow-private-network": "true" };
      return void response.writeHead(204, preflight).end();
    }
    if (request.method !== "POST") return void response.writeHead(200, { "content-type": "application/octet-stream" }).end(body);
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      body = Buffer.concat(chunks);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/snapshot`,
    size: () => body.length,
    close: () => {
      // Browsers keep connections open, which close() alone would wait for.
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A page of the app's origin that runs nothing of the app (its icon), for moving a snapshot
 * in or out of the context's storage. Served by the app's server, so the browser treats
 * it as the app (a page that Playwright makes up may not reach the loopback server above).
 */
async function blankPage(context: BrowserContext, origin: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(new URL("/icon.svg", origin).href);
  return page;
}

/**
 * Boots the Playground in a fresh context, as a first visit does, and takes the snapshot the
 * app stores after that boot (the one every later visit of this build starts from) into `server`.
 */
export async function takeStoredSnapshot(browser: Browser, server: SnapshotServer): Promise<StoredSnapshot> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await openPlayground(page);
    const stored = () => inSnapshotStore(page, async (store) => (await store.entries()).length);
    await expect.poll(stored, { timeout: 60_000 }).toBe(1);
    const snapshot = await inSnapshotStore(
      await blankPage(context, page.url()),
      async (store, bytesUrl) => {
        const [{ key, data, checksum, failures }] = await store.entries();
        await fetch(bytesUrl, { method: "POST", body: data });
        return { key, checksum, failures, bytesUrl };
      },
      server.url,
    );
    if (!server.size()) throw new Error("the stored snapshot did not leave the page");
    return snapshot;
  } finally {
    await context.close();
  }
}

/**
 * Stores `snapshot` in `context`'s IndexedDB for the app's origin, so the context starts
 * as a repeat visit does: Python restores the snapshot instead of booting Pyodide and making
 * one. The first visit's own path is tested where a test asks for it (snapshot.spec.ts).
 */
export async function seedStoredSnapshot(context: BrowserContext, snapshot: StoredSnapshot): Promise<void> {
  const page = await blankPage(context, snapshot.key);
  try {
    await inSnapshotStore(
      page,
      async (store, { bytesUrl, ...entry }) => store.put({ ...entry, data: await (await fetch(bytesUrl)).blob() }),
      snapshot,
    );
  } finally {
    await page.close();
  }
}
