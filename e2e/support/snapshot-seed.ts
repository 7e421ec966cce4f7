import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { SNAPSHOT_CACHE } from "../../src/runtime/snapshot-cache";
import { openPlayground } from "./playground";

export { SNAPSHOT_CACHE };

/** One stored snapshot, as the app keeps it in Cache Storage; its bytes are at `bytesUrl`. */
export interface StoredSnapshot {
  url: string;
  headers: Record<string, string>;
  bytesUrl: string;
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
 * in or out of the context's Cache Storage. Served by the app's server, so the browser treats
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
    const stored = () => page.evaluate(async (name) => (await (await caches.open(name)).keys()).length, SNAPSHOT_CACHE);
    await expect.poll(stored, { timeout: 60_000 }).toBe(1);
    const { url, headers } = await (await blankPage(context, page.url())).evaluate(
      async ({ name, bytesUrl }) => {
        const cache = await caches.open(name);
        const [request] = await cache.keys();
        const response = (await cache.match(request))!;
        await fetch(bytesUrl, { method: "POST", body: await response.blob() });
        return { url: request.url, headers: Object.fromEntries(response.headers) };
      },
      { name: SNAPSHOT_CACHE, bytesUrl: server.url },
    );
    if (!server.size()) throw new Error("the stored snapshot did not leave the page");
    return { url, headers, bytesUrl: server.url };
  } finally {
    await context.close();
  }
}

/**
 * Stores `snapshot` in `context`'s Cache Storage for the app's origin, so the context starts
 * as a repeat visit does: Python restores the snapshot instead of booting Pyodide and making
 * one. The first visit's own path is tested where a test asks for it (snapshot.spec.ts).
 */
export async function seedStoredSnapshot(context: BrowserContext, snapshot: StoredSnapshot): Promise<void> {
  const page = await blankPage(context, snapshot.url);
  try {
    await page.evaluate(async ({ name, url, headers, bytesUrl }) => {
      const bytes = await (await fetch(bytesUrl)).blob();
      await (await caches.open(name)).put(url, new Response(bytes, { headers }));
    }, { name: SNAPSHOT_CACHE, ...snapshot });
  } finally {
    await page.close();
  }
}
