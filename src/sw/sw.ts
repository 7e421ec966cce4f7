/// <reference lib="webworker" />
/**
 * Kiln's service worker (Workbox): the app and Pyodide's core are precached at install;
 * packages and lock files are cached as they are used, in a cache named after the Pyodide
 * version so an upgrade never mixes versions. A new version waits until the page asks.
 */
import { clientsClaim, type WorkboxPlugin } from "workbox-core";
import { addPlugins, cleanupOutdatedCaches, precacheAndRoute } from "workbox-precaching";
import { registerRoute } from "workbox-routing";
import { CacheFirst, NetworkFirst } from "workbox-strategies";
import { CacheableResponsePlugin } from "workbox-cacheable-response";
import { PYODIDE_VERSION } from "../versions";

declare const self: ServiceWorkerGlobalScope & { __WB_MANIFEST: (string | { url: string; revision: string | null })[] };

const PACKAGES = `kiln-packages-pyodide-${PYODIDE_VERSION}`;

/**
 * Responses from the cache carry the headers that make the page cross-origin isolated, so
 * `crossOriginIsolated` (interrupts, `input()`) holds offline too.
 */
const ISOLATION: Record<string, string> = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
  "Cross-Origin-Resource-Policy": "cross-origin",
};
const keepIsolation: WorkboxPlugin = {
  cachedResponseWillBeUsed: async ({ cachedResponse }) => {
    if (!cachedResponse || cachedResponse.type === "opaque") return cachedResponse;
    if (cachedResponse.headers.has("Document-Isolation-Policy")) return cachedResponse;
    const missing = Object.entries(ISOLATION).filter(([name]) => !cachedResponse.headers.has(name));
    if (!missing.length) return cachedResponse;
    const headers = new Headers(cachedResponse.headers);
    for (const [name, value] of missing) headers.set(name, value);
    return new Response(await cachedResponse.blob(), { status: cachedResponse.status, statusText: cachedResponse.statusText, headers });
  },
};

addPlugins([keepIsolation]);
precacheAndRoute(self.__WB_MANIFEST);
cleanupOutdatedCaches();

const ok = new CacheableResponsePlugin({ statuses: [200] });
// Package files never change for a given name (the lock file pins their sha256).
registerRoute(
  ({ request, url }) => request.method === "GET" && /\.(whl|zip|tar|tgz|tar\.gz|so)$/.test(url.pathname),
  new CacheFirst({ cacheName: PACKAGES, plugins: [ok, keepIsolation] }),
);
// Lock files can change: the network first, the cache when offline.
registerRoute(
  ({ request, url }) => request.method === "GET" && url.pathname.endsWith(".json") && /lock/.test(url.pathname),
  new NetworkFirst({ cacheName: PACKAGES, networkTimeoutSeconds: 5, plugins: [ok, keepIsolation] }),
);

self.addEventListener("activate", (event) => {
  // Packages cached for another Pyodide version are useless now.
  event.waitUntil(
    caches.keys().then((keys) =>
      Promise.all(keys.filter((key) => key.startsWith("kiln-packages-") && key !== PACKAGES).map((key) => caches.delete(key))),
    ),
  );
});

self.addEventListener("message", (event: ExtendableMessageEvent) => {
  if ((event.data as { type?: string } | null)?.type === "SKIP_WAITING") void self.skipWaiting();
});

// The first install takes charge of the open page at once (an update waits for the page to ask).
clientsClaim();
